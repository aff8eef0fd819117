package e2e

import (
	"strconv"

	cfgpkg "quarry/internal/config"
	"quarry/internal/store"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

type config = cfgpkg.Config

type storeTx = store.Tx
