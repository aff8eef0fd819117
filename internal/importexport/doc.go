// Package importexport reads and writes the archives of group export and
// import: gzip-compressed tar files in GitLab's layout (a VERSION file and a
// tree/ of newline-delimited JSON files).
//
// Writer streams an archive to any io.Writer; nothing is held in memory
// beyond one copy buffer.
//
// Extract unpacks an uploaded archive into an empty directory and treats
// the upload as hostile. It accepts only directories and regular files, and
// refuses, with a *FormatError whose message can be shown to the client:
//
//   - input that is not gzip, or whose gzip data is corrupt (bad header,
//     damaged compressed data, wrong checksum), truncated, or followed by
//     something that is not gzip;
//   - tar headers that do not parse, and a tar stream cut short;
//   - entry names that could land outside the directory or are unusable:
//     absolute ("/x", "C:\x"), with a backslash, with a ".." element, empty,
//     with NUL, longer than Limits.MaxNameLen, or with an element longer
//     than 255 bytes (the usual file system limit);
//   - symbolic links, hard links, devices, FIFOs and every other entry type
//     but a regular file or a directory (PAX headers and GNU long names are
//     read by archive/tar and are fine), because any of them could redirect
//     a later write or reach outside the directory;
//   - two entries with the same cleaned name, a file where a directory was,
//     and an entry below a file;
//   - more than Limits.MaxEntries entries, or as many directories;
//   - more than Limits.MaxUnpacked bytes of file content plus data left in
//     the gzip stream after the tar's end: the decompression-bomb guard,
//     counted while copying so that Extract stops as soon as the limit is
//     passed; tar metadata (headers, padding, PAX records) has its own
//     bound of a few KiB per entry.
//
// Extract reads the stream to the end of the gzip data, so its checksum is
// verified, before it reports success. It creates files with O_EXCL and
// mode 0600, directories with mode 0700, all through an os.Root on the
// directory, so nothing is written outside it.
//
// Lines reads the newline-delimited JSON files of an unpacked archive one
// bounded line at a time.
package importexport
