//go:build !race && unix

package main

const raceEnabled = false
