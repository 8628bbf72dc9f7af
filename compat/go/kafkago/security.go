// SASL (PLAIN, SCRAM-SHA-256/512) and TLS from the run's runner.Sec, on the
// Transport (Client, Writer) and the Dialer (Reader, ConsumerGroup), and the
// login op that reports how the client sees a refused login.
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"

	"pgkafka/compat/go/internal/runner"
)

func mechanism() sasl.Mechanism {
	s := runner.Sec
	if !s.SASL() {
		return nil
	}
	var algo scram.Algorithm
	switch s.Mechanism {
	case "PLAIN":
		return plain.Mechanism{Username: s.Username, Password: s.Password}
	case "SCRAM-SHA-256":
		algo = scram.SHA256
	case "SCRAM-SHA-512":
		algo = scram.SHA512
	default:
		panic(fmt.Sprintf("unknown SASL mechanism %q", s.Mechanism))
	}
	m, err := scram.Mechanism(algo, s.Username, s.Password)
	if err != nil {
		panic(err)
	}
	return m
}

func transport() *kafka.Transport {
	return &kafka.Transport{ClientID: "compat-kafka-go", TLS: runner.Sec.TLS(), SASL: mechanism()}
}

func dialer() *kafka.Dialer {
	return &kafka.Dialer{ClientID: "compat-kafka-go", Timeout: 10 * time.Second, DualStack: true, TLS: runner.Sec.TLS(), SASLMechanism: mechanism()}
}

// login asks for metadata; error is "" or the kind of the client's error.
func login(ctx context.Context, bootstrap string, _ struct{}) (any, error) {
	_, err := client(bootstrap).Metadata(ctx, &kafka.MetadataRequest{})
	switch {
	case err == nil:
		return map[string]any{"error": "", "message": ""}, nil
	case errors.Is(err, kafka.SASLAuthenticationFailed):
		return map[string]any{"error": "kafka.SASLAuthenticationFailed", "message": err.Error()}, nil
	default:
		return map[string]any{"error": fmt.Sprintf("%T", err), "message": err.Error()}, nil
	}
}
