// Package runner is the JSON framing shared by the Go client programs: a
// request on stdin names the broker and a list of steps, each step runs
// against the client, and the answers go to stdout as one JSON document.
// Batching the steps keeps process starts few (one per test scenario).
package runner

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"
)

// Header travels as ["key", base64 value or null], as in compat/support/records.ts.
type Header struct {
	Key   string
	Value []byte
}

func (h Header) MarshalJSON() ([]byte, error) { return json.Marshal([]any{h.Key, h.Value}) }

func (h *Header) UnmarshalJSON(b []byte) error {
	var raw [2]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if err := json.Unmarshal(raw[0], &h.Key); err != nil {
		return err
	}
	return json.Unmarshal(raw[1], &h.Value)
}

// Rec is a record to produce. Keys and values are base64 in JSON; null stays nil,
// "" is a zero-length (non-nil) slice, so empty and null values stay distinct.
type Rec struct {
	Partition int32    `json:"partition"`
	Key       []byte   `json:"key"`
	Value     []byte   `json:"value"`
	Headers   []Header `json:"headers"`
}

// ReadRec is a record as read back.
type ReadRec struct {
	Partition int32    `json:"partition"`
	Offset    int64    `json:"offset"`
	Key       []byte   `json:"key"`
	Value     []byte   `json:"value"`
	Headers   []Header `json:"headers"`
}

// SortRecs orders records by partition, then offset.
func SortRecs(rs []ReadRec) {
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].Partition != rs[j].Partition {
			return rs[i].Partition < rs[j].Partition
		}
		return rs[i].Offset < rs[j].Offset
	})
}

// Step is one operation; Args holds the whole step object for the op to decode.
type Step struct {
	Op   string
	Args json.RawMessage
}

// Op runs one step: bootstrap is the broker address, args the step's JSON.
type Op func(ctx context.Context, bootstrap string, args json.RawMessage) (any, error)

type request struct {
	Bootstrap string            `json:"bootstrap"`
	Security  *Security         `json:"security"`
	Steps     []json.RawMessage `json:"steps"`
}

// Security is how every client of a run connects: SASL (PLAIN, SCRAM-SHA-256,
// SCRAM-SHA-512) and TLS trusting CAFile. Nil: PLAINTEXT.
type Security struct {
	// Protocol is SASL_SSL, SASL_PLAINTEXT or SSL, as Kafka's security.protocol.
	Protocol  string `json:"protocol"`
	Mechanism string `json:"mechanism"`
	Username  string `json:"username"`
	Password  string `json:"password"`
	CAFile    string `json:"caFile"`
}

// Sec is the run's Security, set by Main before the first step (nil: PLAINTEXT).
var Sec *Security

// SASL reports whether the run authenticates with SASL.
func (s *Security) SASL() bool {
	return s != nil && (s.Protocol == "SASL_SSL" || s.Protocol == "SASL_PLAINTEXT")
}

// TLS is the run's TLS configuration trusting CAFile, nil without TLS.
func (s *Security) TLS() *tls.Config {
	if s == nil || (s.Protocol != "SASL_SSL" && s.Protocol != "SSL") {
		return nil
	}
	pem, err := os.ReadFile(s.CAFile)
	if err != nil {
		fail(nil, fmt.Errorf("reading the CA file: %w", err))
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		fail(nil, fmt.Errorf("no certificate in the CA file"))
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// Main reads the request, runs each step in order and prints {"results": [...]}.
// A step whose op fails ends the run: {"results": [...so far], "error": "..."}, exit 1.
// Kafka-level outcomes a scenario expects (error codes) are results, not failures.
func Main(ops map[string]Op) {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fail(nil, fmt.Errorf("bad request: %w", err))
	}
	Sec = req.Security
	results := []any{}
	for i, raw := range req.Steps {
		var head struct {
			Op string `json:"op"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			fail(results, fmt.Errorf("step %d: %w", i, err))
		}
		op, ok := ops[head.Op]
		if !ok {
			fail(results, fmt.Errorf("step %d: unknown op %q", i, head.Op))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
		res, err := op(ctx, req.Bootstrap, raw)
		cancel()
		if err != nil {
			fail(results, fmt.Errorf("step %d (%s): %w", i, head.Op, err))
		}
		results = append(results, res)
	}
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"results": results})
}

func fail(results []any, err error) {
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"results": results, "error": err.Error()})
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// Decode unmarshals a step's arguments into T.
func Decode[T any](args json.RawMessage) (T, error) {
	var v T
	err := json.Unmarshal(args, &v)
	return v, err
}

// Typed wraps a function of typed arguments as an Op.
func Typed[T any](f func(ctx context.Context, bootstrap string, a T) (any, error)) Op {
	return func(ctx context.Context, bootstrap string, raw json.RawMessage) (any, error) {
		a, err := Decode[T](raw)
		if err != nil {
			return nil, err
		}
		return f(ctx, bootstrap, a)
	}
}
