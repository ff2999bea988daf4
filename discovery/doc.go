// Package discovery registers and finds service instances.
package discovery
