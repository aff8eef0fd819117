// Package buildinfo names this build of Quarry.
package buildinfo

import "runtime/debug"

// Version is Quarry's own version.
const Version = "0.1.0"

// APIVersion is the GitLab API level Quarry speaks; /api/v4/version reports
// it so clients that check versions enable the features Quarry serves.
const APIVersion = "17.5.0"

// Revision is the source revision of the binary, or Quarry's version when
// the build recorded none.
func Revision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 8 {
				return s.Value[:8]
			}
		}
	}
	return "quarry-" + Version
}
