// tlogcheck: an independent check of a vulnid feed's transparency log with
// Go's reference code for signed notes and tiled logs
// (golang.org/x/mod/sumdb/note and sumdb/tlog), built by the tests in GOPATH
// mode without network:
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o tlogcheck tlogcheck.go
//
// It reads only what vulnid-feed(5) documents: the year files, the log's
// directory (DIR/log: checkpoint, tile/; DIR itself for a log of version 1)
// and the log's verifier key.  With -generic it is a generic C2SP client:
// it reads the checkpoint, the tiles and the entry bundles alone, every
// entry from its bundle.  Any failure exits 1.
//
// -genkey NAME prints a new note key (its private and verifier key lines),
// and -write-v1 -skey KEY writes a log of version 1 (its entries the lines
// themselves) into the feed directory, as feeds written before DIR/log had.
package main

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const height = 8

type line struct {
	pos  int64
	year int
	n    int64
	data []byte
}

type checkpoint struct {
	origin string
	size   int64
	root   tlog.Hash
	text   string
	raw    []byte
}

func die(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "tlogcheck: "+format+"\n", args...)
	os.Exit(1)
}

// openCheckpoint verifies the note signature with the log's key and parses
// the C2SP checkpoint text.
func openCheckpoint(raw []byte, v note.Verifier) checkpoint {
	n, err := note.Open(raw, note.VerifierList(v))
	if err != nil {
		die("checkpoint: %v", err)
	}
	ls := strings.Split(n.Text, "\n")
	if len(ls) < 4 || ls[len(ls)-1] != "" {
		die("checkpoint: not three lines")
	}
	size, err := strconv.ParseInt(ls[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != ls[1] {
		die("checkpoint: bad size %q", ls[1])
	}
	rb, err := base64.StdEncoding.DecodeString(ls[2])
	if err != nil || len(rb) != 32 {
		die("checkpoint: bad root hash")
	}
	if ls[0] != v.Name() {
		die("checkpoint: origin %q is not the key's name %q", ls[0], v.Name())
	}
	var root tlog.Hash
	copy(root[:], rb)
	return checkpoint{ls[0], size, root, n.Text, raw}
}

// readLines returns the lines of the year files in log order: by pos, then
// year, then line number (lines of one pos are of one entry and one file).
func readLines(dir string) []line {
	names, err := filepath.Glob(filepath.Join(dir, "[0-9][0-9][0-9][0-9].jsonl"))
	if err != nil {
		die("%v", err)
	}
	var all []line
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			die("%v", err)
		}
		r := bufio.NewReaderSize(f, 1<<20)
		for {
			b, err := r.ReadBytes('\n')
			if len(b) == 0 && err != nil {
				break
			}
			if b[len(b)-1] != '\n' {
				die("%s: a line without its newline", name)
			}
			b = b[:len(b)-1]
			var fr struct {
				Year int   `json:"year"`
				N    int64 `json:"n"`
				Pos  int64 `json:"pos"`
			}
			if err := json.Unmarshal(b, &fr); err != nil {
				die("%s: %v", name, err)
			}
			all = append(all, line{fr.Pos, fr.Year, fr.N, b})
		}
		f.Close()
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.pos != b.pos {
			return a.pos < b.pos
		}
		if a.year != b.year {
			return a.year < b.year
		}
		return a.n < b.n
	})
	return all
}

// memStore holds every stored hash of the tree, as a log server would.
type memStore []tlog.Hash

func (m memStore) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		if x < 0 || x >= int64(len(m)) {
			return nil, errors.New("no such hash")
		}
		out[i] = m[x]
	}
	return out, nil
}

// c2spPath maps Go's tile/H/L/N[.p/W] to C2SP tlog-tiles' tile/L/N[.p/W].
func c2spPath(t tlog.Tile) string {
	p := t.Path()
	prefix := fmt.Sprintf("tile/%d/", height)
	if !strings.HasPrefix(p, prefix) {
		die("unexpected tile path %s", p)
	}
	return "tile/" + strings.TrimPrefix(p, prefix)
}

type fileTiles struct{ dir string }

func (f fileTiles) Height() int { return height }
func (f fileTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		b, err := os.ReadFile(filepath.Join(f.dir, c2spPath(t)))
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}
func (f fileTiles) SaveTiles([]tlog.Tile, [][]byte) {}

func bundle(entries [][]byte, t tlog.Tile) ([]byte, bool) {
	var b bytes.Buffer
	start := t.N << height
	for i := int64(0); i < int64(t.W); i++ {
		d := entries[start+i]
		if len(d) > 65535 {
			return nil, false
		}
		var l [2]byte
		binary.BigEndian.PutUint16(l[:], uint16(len(d)))
		b.Write(l[:])
		b.Write(d)
	}
	return b.Bytes(), true
}

// logEntry is the entry a feed line is in the log of version 2
// (vulnid-feed(5), LOG): the line's first members and the SHA-256 of the
// whole line.
func logEntry(l []byte) ([]byte, error) {
	var o struct {
		Year  *int64  `json:"year"`
		N     *int64  `json:"n"`
		Pos   *int64  `json:"pos"`
		Type  *string `json:"type"`
		Entry *string `json:"entry"`
		Seq   *int64  `json:"seq"`
	}
	if err := json.Unmarshal(l, &o); err != nil {
		return nil, err
	}
	if o.Year == nil || o.N == nil || o.Pos == nil || o.Type == nil || o.Entry == nil || o.Seq == nil {
		return nil, errors.New("not a feed line")
	}
	t, _ := json.Marshal(*o.Type)
	e, _ := json.Marshal(*o.Entry)
	return []byte(fmt.Sprintf(`{"log":"vulnid-log-2","year":%d,"n":%d,"pos":%d,"type":%s,"entry":%s,"seq":%d,"sha256":"%x"}`,
		*o.Year, *o.N, *o.Pos, t, e, *o.Seq, sha256.Sum256(l))), nil
}

// parseBundle splits a C2SP entry bundle into its entries.
func parseBundle(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 2 {
			return nil, errors.New("a truncated length")
		}
		n := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+n {
			return nil, errors.New("a truncated entry")
		}
		out = append(out, b[2:2+n])
		b = b[2+n:]
	}
	return out, nil
}

func hashLines(s string) []tlog.Hash {
	var out []tlog.Hash
	for _, l := range strings.Split(s, "\n") {
		if l == "" {
			continue
		}
		h, err := tlog.ParseHash(l)
		if err != nil {
			die("bad proof hash %q", l)
		}
		out = append(out, h)
	}
	return out
}

// checkCosignatures verifies tlog-cosignature/v1 (type 0x04) signatures with
// crypto/ed25519; sumdb/note knows only type 0x01.
func checkCosignatures(raw []byte, text string, vkeys []string, need int) {
	if need < 0 {
		need = len(vkeys)
	}
	good := 0
	for _, vk := range vkeys {
		parts := strings.SplitN(vk, "+", 3)
		kb, err := base64.StdEncoding.DecodeString(parts[2])
		if len(parts) != 3 || err != nil || len(kb) != 33 || kb[0] != 4 {
			die("bad witness key %s", vk)
		}
		h := sha256.Sum256(append(append([]byte(parts[0]+"\n"), 4), kb[1:]...))
		if fmt.Sprintf("%08x", binary.BigEndian.Uint32(h[:4])) != parts[1] {
			die("witness key %s: bad key id", vk)
		}
		for _, l := range strings.Split(string(raw), "\n") {
			f := strings.Split(l, " ")
			if len(f) != 3 || f[0] != "\u2014" || f[1] != parts[0] {
				continue
			}
			sig, err := base64.StdEncoding.DecodeString(f[2])
			if err != nil || len(sig) != 4+8+64 || fmt.Sprintf("%08x", binary.BigEndian.Uint32(sig)) != parts[1] {
				continue
			}
			ts := binary.BigEndian.Uint64(sig[4:12])
			msg := fmt.Sprintf("cosignature/v1\ntime %d\n%s", ts, text)
			if !ed25519.Verify(ed25519.PublicKey(kb[1:]), []byte(msg), sig[12:]) {
				die("a bad cosignature by %s", parts[0])
			}
			good++
			break
		}
	}
	if good < need {
		die("%d cosignatures, %d required", good, need)
	}
	fmt.Printf("ok cosignatures %d\n", good)
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// genericEntries reads every entry of a log of size n from its entry
// bundles, as a C2SP client that knows nothing of the feed does.
func genericEntries(logDir string, n int64) [][]byte {
	var entries [][]byte
	for _, t := range tlog.NewTiles(height, 0, n) {
		if t.L != 0 || (t.W < 1<<height && int64(t.W) != n&0xff) {
			continue
		}
		p := filepath.Join(logDir, "tile/entries/"+strings.TrimPrefix(c2spPath(t), "tile/0/"))
		b, err := os.ReadFile(p)
		if err != nil {
			die("entry bundle: %v", err)
		}
		es, err := parseBundle(b)
		if err != nil || len(es) != t.W {
			die("%s is not a bundle of %d entries (%v)", p, t.W, err)
		}
		entries = append(entries, es...)
	}
	if int64(len(entries)) != n {
		die("the bundles hold %d entries, the checkpoint %d", len(entries), n)
	}
	return entries
}

// proofFiles: the tlog-proofs of a file (one, or several an empty line
// apart) or of every *.tlog-proof file of a directory.
func proofFiles(path string) []string {
	st, err := os.Stat(path)
	if err != nil {
		die("%v", err)
	}
	var texts []string
	if !st.IsDir() {
		data, err := os.ReadFile(path)
		if err != nil {
			die("%v", err)
		}
		for _, b := range strings.Split(string(data), "c2sp.org/tlog-proof@v1\n")[1:] {
			texts = append(texts, "c2sp.org/tlog-proof@v1\n"+strings.TrimRight(b, "\n")+"\n")
		}
		return texts
	}
	filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".tlog-proof") {
			data, err := os.ReadFile(p)
			if err != nil {
				die("%v", err)
			}
			if strings.Count(string(data), "c2sp.org/tlog-proof@v1\n") != 1 {
				die("%s holds more than one proof", p)
			}
			texts = append(texts, string(data))
		}
		return nil
	})
	return texts
}

// writeV1 writes the tiles, bundles (those without entries over 65535
// bytes) and signed checkpoint of the lines as the log of version 1.
func writeV1(dir, skey string) {
	signer, err := note.NewSigner(skey)
	if err != nil {
		die("skey: %v", err)
	}
	lines := readLines(dir)
	var entries [][]byte
	var store memStore
	for i, l := range lines {
		entries = append(entries, l.data)
		hs, err := tlog.StoredHashes(int64(i), l.data, store)
		if err != nil {
			die("%v", err)
		}
		store = append(store, hs...)
	}
	n := int64(len(lines))
	for _, t := range tlog.NewTiles(height, 0, n) {
		if t.W < 1<<height && int64(t.W) != (n>>(uint(t.L)*height))&0xff {
			continue
		}
		data, err := tlog.ReadTileData(t, store)
		if err != nil {
			die("%v", err)
		}
		p := filepath.Join(dir, c2spPath(t))
		os.MkdirAll(filepath.Dir(p), 0755)
		if err := os.WriteFile(p, data, 0644); err != nil {
			die("%v", err)
		}
		if b, ok := bundle(entries, t); t.L == 0 && ok {
			p := filepath.Join(dir, "tile/entries/"+strings.TrimPrefix(c2spPath(t), "tile/0/"))
			os.MkdirAll(filepath.Dir(p), 0755)
			if err := os.WriteFile(p, b, 0644); err != nil {
				die("%v", err)
			}
		}
	}
	root, err := tlog.TreeHash(n, store)
	if err != nil {
		die("%v", err)
	}
	text := fmt.Sprintf("%s\n%d\n%s\n", signer.Name(), n, base64.StdEncoding.EncodeToString(root[:]))
	msg, err := note.Sign(&note.Note{Text: text}, signer)
	if err != nil {
		die("%v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "checkpoint"), msg, 0644); err != nil {
		die("%v", err)
	}
	fmt.Printf("ok wrote a log of version 1 of %d entries\n", n)
}

func main() {
	dir := flag.String("feed", "", "the feed directory")
	genkey := flag.String("genkey", "", "print a new note key of this name (private, then verifier key)")
	skey := flag.String("skey", "", "with -write-v1: the private note key")
	write := flag.Bool("write-v1", false, "write a log of version 1 of the feed's lines into the feed directory")
	logFlag := flag.String("log", "", "the log's directory (default: FEED/log, else FEED for a log of version 1)")
	v1 := flag.Bool("v1", false, "check the feed's log of version 1 (its entries are the lines)")
	generic := flag.Bool("generic", false, "a generic C2SP client: the entries from the bundles alone")
	vkey := flag.String("vkey", "", "the log's verifier key")
	old := flag.String("old", "", "a previous checkpoint: prove consistency from the tiles")
	proofs := flag.String("proofs", "", "tlog-proofs written by vulnid prove (a file, or a directory of them)")
	consistency := flag.String("consistency", "", "a consistency proof written by vulnid prove --consistency (with -old)")
	records := flag.String("records", "", "indexes to prove (comma separated; default first, middle, last; all: every one)")
	var witnesses multi
	flag.Var(&witnesses, "witness", "a witness verifier key (type 0x04)")
	cosigned := flag.String("cosigned", "", "a copy of the checkpoint with cosignatures (default: the log's own)")
	need := flag.Int("cosignatures", -1, "cosignatures required (default: all witnesses given)")
	flag.Parse()

	if *genkey != "" {
		sk, vk, err := note.GenerateKey(rand.Reader, *genkey)
		if err != nil {
			die("%v", err)
		}
		fmt.Printf("%s\n%s\n", sk, vk)
		return
	}
	if *write {
		writeV1(*dir, *skey)
		return
	}
	v, err := note.NewVerifier(*vkey)
	if err != nil {
		die("vkey: %v", err)
	}
	logDir, version := *logFlag, 2
	if logDir == "" {
		logDir = filepath.Join(*dir, "log")
		if *v1 || !exists(filepath.Join(logDir, "checkpoint")) {
			logDir, version = *dir, 1
		}
	}
	raw, err := os.ReadFile(filepath.Join(logDir, "checkpoint"))
	if err != nil {
		die("%v", err)
	}
	cp := openCheckpoint(raw, v)
	fmt.Printf("ok checkpoint signature %s %d\n", cp.origin, cp.size)

	// The entries: from the bundles (a generic client), or made from the
	// feed's lines (the line itself in version 1, its log entry in 2).
	var entries [][]byte
	var lines []line
	if *dir != "" {
		lines = readLines(*dir)
	}
	if *generic {
		entries = genericEntries(logDir, cp.size)
		fmt.Printf("ok %d entries read from the bundles\n", len(entries))
		for i, l := range lines {
			if int64(i) >= cp.size {
				break
			}
			e, err := logEntry(l.data)
			if err != nil || !bytes.Equal(e, entries[i]) {
				die("entry %d is not the entry of line %d of %d.jsonl (%v)", i, l.n, l.year, err)
			}
		}
		if lines != nil {
			fmt.Printf("ok every entry names its line\n")
		}
	} else {
		if int64(len(lines)) < cp.size || (version == 2 && int64(len(lines)) != cp.size) {
			die("the feed has %d lines, the checkpoint %d", len(lines), cp.size)
		}
		for _, l := range lines[:cp.size] {
			e := l.data
			if version == 2 {
				if e, err = logEntry(l.data); err != nil {
					die("line %d of %d.jsonl: %v", l.n, l.year, err)
				}
			}
			entries = append(entries, e)
		}
	}
	var store memStore
	for i, e := range entries {
		hs, err := tlog.StoredHashes(int64(i), e, store)
		if err != nil {
			die("%v", err)
		}
		store = append(store, hs...)
	}
	th, err := tlog.TreeHash(cp.size, store)
	if err != nil || th != cp.root {
		die("the lines make root %v, the checkpoint says %v", th, cp.root)
	}
	fmt.Printf("ok root of the entries\n")

	// Every tile byte for byte: TileHashReader alone does not check every
	// full tile against its parent.
	ntiles, nbundles := 0, 0
	for _, t := range tlog.NewTiles(height, 0, cp.size) {
		// Go's sumdb publishes a partial tile of every width; a C2SP log
		// has those of its checkpoints, and the last one must be there.
		if t.W < 1<<height && int64(t.W) != (cp.size>>(uint(t.L)*height))&0xff {
			continue
		}
		want, err := tlog.ReadTileData(t, store)
		if err != nil {
			die("%v", err)
		}
		have, err := os.ReadFile(filepath.Join(logDir, c2spPath(t)))
		if err != nil || !bytes.Equal(have, want) {
			die("%s differs from the tree (%v)", c2spPath(t), err)
		}
		ntiles++
		if t.L == 0 {
			p := filepath.Join(logDir, "tile/entries/"+strings.TrimPrefix(c2spPath(t), "tile/0/"))
			want, ok := bundle(entries, t)
			have, err := os.ReadFile(p)
			if ok && (err != nil || !bytes.Equal(have, want)) {
				die("%s differs from the lines", p)
			}
			if !ok && err == nil {
				die("%s exists, but an entry of it is over 65535 bytes", p)
			}
			if ok {
				nbundles++
			}
		}
	}
	fmt.Printf("ok tiles %d bundles %d\n", ntiles, nbundles)

	thr := tlog.TileHashReader(tlog.Tree{N: cp.size, Hash: cp.root}, fileTiles{logDir})
	if th, err := tlog.TreeHash(cp.size, thr); err != nil || th != cp.root {
		die("the tiles make root %v (%v)", th, err)
	}
	fmt.Printf("ok root of the tiles\n")
	var idx []int64
	if *records == "all" {
		for i := int64(0); i < cp.size; i++ {
			idx = append(idx, i)
		}
	} else if *records != "" {
		for _, s := range strings.Split(*records, ",") {
			i, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				die("bad record index %q", s)
			}
			idx = append(idx, i)
		}
	} else if cp.size > 0 {
		idx = []int64{0, cp.size / 2, cp.size - 1}
	}
	for _, i := range idx {
		p, err := tlog.ProveRecord(cp.size, i, thr)
		if err != nil {
			die("prove record %d: %v", i, err)
		}
		if err := tlog.CheckRecord(p, cp.size, cp.root, i, tlog.RecordHash(entries[i])); err != nil {
			die("record %d: %v", i, err)
		}
	}
	fmt.Printf("ok inclusion %d records\n", len(idx))

	if *proofs != "" {
		n := 0
		for _, b := range proofFiles(*proofs) {
			b = strings.TrimPrefix(b, "c2sp.org/tlog-proof@v1\n")
			parts := strings.SplitN(b, "\n\n", 2)
			if len(parts) != 2 {
				die("a proof without its checkpoint")
			}
			head := strings.SplitN(parts[0], "\n", 3)
			if len(head) < 2 || !strings.HasPrefix(head[0], "extra ") || !strings.HasPrefix(head[1], "index ") {
				die("a proof without extra and index")
			}
			line, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(head[0], "extra "))
			if err != nil {
				die("bad extra")
			}
			i, err := strconv.ParseInt(strings.TrimPrefix(head[1], "index "), 10, 64)
			if err != nil {
				die("bad index")
			}
			var hs []tlog.Hash
			if len(head) == 3 {
				hs = hashLines(head[2])
			}
			leaf := line
			if version == 2 {
				if leaf, err = logEntry(line); err != nil {
					die("proof for record %d: the extra data is not a feed line", i)
				}
			}
			pc := openCheckpoint([]byte(parts[1]), v)
			if err := tlog.CheckRecord(tlog.RecordProof(hs), pc.size, pc.root, i, tlog.RecordHash(leaf)); err != nil {
				die("vulnid's proof for record %d: %v", i, err)
			}
			if len(witnesses) > 0 {
				checkCosignatures([]byte(parts[1]), pc.text, witnesses, *need)
			}
			n++
		}
		if n == 0 {
			die("no proof in %s", *proofs)
		}
		fmt.Printf("ok vulnid proofs %d\n", n)
	}

	if *old != "" {
		oraw, err := os.ReadFile(*old)
		if err != nil {
			die("%v", err)
		}
		oc := openCheckpoint(oraw, v)
		p, err := tlog.ProveTree(cp.size, oc.size, thr)
		if err != nil {
			die("prove tree: %v", err)
		}
		if err := tlog.CheckTree(p, cp.size, cp.root, oc.size, oc.root); err != nil {
			die("consistency from %d: %v", oc.size, err)
		}
		fmt.Printf("ok consistency %d -> %d (%d hashes)\n", oc.size, cp.size, len(p))
		if *consistency != "" {
			data, err := os.ReadFile(*consistency)
			if err != nil {
				die("%v", err)
			}
			parts := strings.SplitN(string(data), "\n\n", 2)
			first := strings.SplitN(parts[0], "\n", 2)
			if len(parts) != 2 || first[0] != fmt.Sprintf("old %d", oc.size) {
				die("not a consistency proof from %d", oc.size)
			}
			var hs []tlog.Hash
			if len(first) == 2 {
				hs = hashLines(first[1])
			}
			nc := openCheckpoint([]byte(parts[1]), v)
			if err := tlog.CheckTree(tlog.TreeProof(hs), nc.size, nc.root, oc.size, oc.root); err != nil {
				die("vulnid's consistency proof: %v", err)
			}
			fmt.Printf("ok vulnid consistency proof %d hashes\n", len(hs))
		}
	}
	if len(witnesses) > 0 && *proofs == "" {
		src := raw
		if *cosigned != "" {
			if src, err = os.ReadFile(*cosigned); err != nil {
				die("%v", err)
			}
			if c := openCheckpoint(src, v); c.text != cp.text {
				die("the cosigned checkpoint is another one")
			}
		}
		checkCosignatures(src, cp.text, witnesses, *need)
	}
	if ok, _ := regexp.MatchString(`^[A-Za-z0-9./_-]+$`, cp.origin); !ok {
		fmt.Printf("note: origin %q is not a plain URL-like name\n", cp.origin)
	}
}
