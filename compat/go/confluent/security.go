// SASL (PLAIN, SCRAM-SHA-256/512) and TLS from the run's runner.Sec as
// librdkafka properties, and the login op that reports how the client sees
// a refused login.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"pgkafka/compat/go/internal/runner"
)

func securityConf(c kafka.ConfigMap) {
	s := runner.Sec
	if s == nil {
		return
	}
	c["security.protocol"] = s.Protocol
	if s.CAFile != "" {
		c["ssl.ca.location"] = s.CAFile
	}
	if s.SASL() {
		c["sasl.mechanisms"] = s.Mechanism
		c["sasl.username"] = s.Username
		c["sasl.password"] = s.Password
	}
}

// login starts a producer and waits for its first error event (librdkafka
// reports a refused login there, not as a request's answer); error is "" if
// metadata came back instead, else the error's code.
func login(ctx context.Context, bootstrap string, _ struct{}) (any, error) {
	p, err := kafka.NewProducer(conf(bootstrap, nil))
	if err != nil {
		return nil, err
	}
	defer p.Close()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-p.Events():
			if ke, ok := ev.(kafka.Error); ok {
				kind := fmt.Sprintf("kafka.Err%d", int(ke.Code()))
				if ke.Code() == kafka.ErrAuthentication {
					kind = "kafka.ErrAuthentication"
				}
				return map[string]any{"error": kind, "message": ke.Error()}, nil
			}
		case <-deadline:
			if _, err := p.GetMetadata(nil, true, 1000); err != nil {
				return map[string]any{"error": fmt.Sprintf("%T", err), "message": err.Error()}, nil
			}
			return map[string]any{"error": "", "message": ""}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
