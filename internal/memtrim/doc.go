// Package memtrim keeps the server's resident memory to what it uses.
package memtrim
