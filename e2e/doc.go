// Package e2e holds Quarry's black-box suites: each test starts the real
// server (apitest) on SQLite and, when QUARRY_TEST_DATABASE_URL is set, on
// PostgreSQL, and drives it over HTTP with the official Go client or raw
// requests.
package e2e
