package main

import (
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // the driver Quarry uses
)

// baseline serves the machine's own limits, to measure beside Quarry in
// the same run: /bare answers 1 KB of JSON from memory; /rows reads a
// page of 20 rows of a 1,000-row SQLite table, plus the table's count,
// and encodes them (what a list costs with nothing of Quarry's around).
//
//	go run ./tools/load baseline -listen 127.0.0.1:18090
//	go run ./tools/load http://127.0.0.1:18090/bare
func baseline(args []string) {
	fs := flag.NewFlagSet("baseline", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:18090", "address to serve on")
	_ = fs.Parse(args)
	dir, err := os.MkdirTemp("", "load-baseline-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "b.db")+"?_pragma=journal_mode(WAL)")
	if err != nil {
		fail(err)
	}
	db.SetMaxOpenConns(4)
	if _, err := db.Exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, path TEXT NOT NULL, description TEXT NOT NULL, created_at INTEGER NOT NULL)`); err != nil {
		fail(err)
	}
	for i := 1; i <= 1000; i++ {
		if _, err := db.Exec(`INSERT INTO items (name, path, description, created_at) VALUES (?, ?, ?, ?)`,
			fmt.Sprintf("Item %d", i), fmt.Sprintf("group/item-%d", i), strings.Repeat("words ", 8), 1700000000+i); err != nil {
			fail(err)
		}
	}
	bare := []byte(`{"items":[` + strings.TrimSuffix(strings.Repeat(`{"id":1,"name":"an item","path":"group/an-item"},`, 20), ",") + `]}`)
	type item struct {
		ID          int64  `json:"id"`
		Name        string `json:"name"`
		Path        string `json:"path"`
		Description string `json:"description"`
		CreatedAt   int64  `json:"created_at"`
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bare", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(bare)
	})
	mux.HandleFunc("GET /rows", func(w http.ResponseWriter, r *http.Request) {
		rows, err := db.QueryContext(r.Context(), `SELECT id, name, path, description, created_at FROM items ORDER BY id DESC LIMIT 20`)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		var page []item
		for rows.Next() {
			var it item
			if err := rows.Scan(&it.ID, &it.Name, &it.Path, &it.Description, &it.CreatedAt); err != nil {
				rows.Close()
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			page = append(page, it)
		}
		rows.Close()
		var total int
		if err := db.QueryRowContext(r.Context(), `SELECT COUNT(*) FROM items`).Scan(&total); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Total", fmt.Sprint(total))
		_ = json.NewEncoder(w).Encode(page)
	})
	fmt.Printf("baseline on http://%s (/bare, /rows)\n", *listen)
	fail(http.ListenAndServe(*listen, mux))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "load:", err)
	os.Exit(1)
}
