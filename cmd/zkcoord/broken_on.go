//go:build zkcoord_broken

package main

import "os"

// brokenMode, in this build only, is the broken behaviour brokenEnv asks for.
func brokenMode() string { return os.Getenv(brokenEnv) }
