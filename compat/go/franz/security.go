// SASL (PLAIN, SCRAM-SHA-256/512) and TLS from the run's runner.Sec, and the
// login op that reports how the client sees a refused login.
package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"pgkafka/compat/go/internal/runner"
)

func securityOpts() []kgo.Opt {
	s := runner.Sec
	opts := []kgo.Opt{}
	if cfg := s.TLS(); cfg != nil {
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if s.SASL() {
		var m sasl.Mechanism
		switch s.Mechanism {
		case "PLAIN":
			m = plain.Auth{User: s.Username, Pass: s.Password}.AsMechanism()
		case "SCRAM-SHA-256":
			m = scram.Auth{User: s.Username, Pass: s.Password}.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			m = scram.Auth{User: s.Username, Pass: s.Password}.AsSha512Mechanism()
		default:
			panic(fmt.Sprintf("unknown SASL mechanism %q", s.Mechanism))
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts
}

// login asks for metadata; error is "" or the kind of the client's error.
func login(ctx context.Context, bootstrap string, _ struct{}) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	_, err = adm.ListTopics(ctx)
	switch {
	case err == nil:
		return map[string]any{"error": "", "message": ""}, nil
	case errors.Is(err, kerr.SaslAuthenticationFailed):
		return map[string]any{"error": "kerr.SaslAuthenticationFailed", "message": err.Error()}, nil
	default:
		return map[string]any{"error": fmt.Sprintf("%T", err), "message": err.Error()}, nil
	}
}
