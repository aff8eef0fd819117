package main

import "syscall"

// dieWithParent makes the kernel kill the server when the tool dies, so
// an interrupted round leaves no server behind.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
