// witnesshttp: Go's HTTP stack (Debian's golang-go, no other package) on
// the other side of vulnid's tlog-witness HTTP:
//
//	witnesshttp serve PORTFILE ROOT PROGRAM ARGS...
//	    a net/http server on 127.0.0.1 that runs PROGRAM ARGS as a CGI
//	    program (net/http/cgi) for every request under ROOT, and writes
//	    its port to PORTFILE
//	witnesshttp post URL FILE
//	    posts FILE with net/http's client and prints the status line,
//	    the Content-Type and the body
//
// Built by the tests like tlogcheck.go.
package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
)

func die(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "witnesshttp: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 2 {
		die("usage: witnesshttp serve PORTFILE ROOT PROGRAM ARGS... | post URL FILE")
	}
	switch os.Args[1] {
	case "serve":
		if len(os.Args) < 5 {
			die("serve PORTFILE ROOT PROGRAM ARGS...")
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			die("%v", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		if err := os.WriteFile(os.Args[2], []byte(fmt.Sprintf("%d\n", port)), 0644); err != nil {
			die("%v", err)
		}
		h := &cgi.Handler{Path: os.Args[4], Root: os.Args[3], Args: os.Args[5:], Stderr: os.Stderr}
		die("%v", http.Serve(ln, h))
	case "post":
		if len(os.Args) != 4 {
			die("post URL FILE")
		}
		body, err := os.ReadFile(os.Args[3])
		if err != nil {
			die("%v", err)
		}
		r, err := http.Post(os.Args[2], "text/plain; charset=utf-8", bytes.NewReader(body))
		if err != nil {
			die("%v", err)
		}
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		if err != nil {
			die("%v", err)
		}
		fmt.Printf("%d %s\n%s", r.StatusCode, r.Header.Get("Content-Type"), b)
	default:
		die("unknown mode %s", os.Args[1])
	}
}
