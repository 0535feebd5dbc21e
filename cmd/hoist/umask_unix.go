//go:build unix

package main

import "syscall"

// privateUmask makes every file `hoist server` creates readable by its user alone (the data
// directory holds the key pair, the CA key and the store; docs/isolation.md).
func privateUmask() { syscall.Umask(0o077) }
