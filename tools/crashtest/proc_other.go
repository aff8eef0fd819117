//go:build !linux

package main

import "syscall"

// dieWithParent has no equivalent here: an interrupted round may leave
// its server running.
func dieWithParent() *syscall.SysProcAttr { return nil }
