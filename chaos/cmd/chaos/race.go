//go:build race

package main

func init() { raceFlag = " -race" }
