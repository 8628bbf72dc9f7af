// SASL (PLAIN, SCRAM-SHA-256/512) and TLS from the run's runner.Sec, and the
// login op that reports how the client sees a refused login. Sarama has no
// SCRAM implementation of its own: Net.SASL.SCRAMClientGeneratorFunc takes
// one, here xdg-go/scram as in sarama's examples.
package main

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"

	"github.com/IBM/sarama"
	"github.com/xdg-go/scram"

	"pgkafka/compat/go/internal/runner"
)

// scramClient is sarama.SCRAMClient over xdg-go/scram.
type scramClient struct {
	hash scram.HashGeneratorFcn
	conv *scram.ClientConversation
}

func (s *scramClient) Begin(user, password, authzID string) error {
	c, err := s.hash.NewClient(user, password, authzID)
	if err != nil {
		return err
	}
	s.conv = c.NewConversation()
	return nil
}

func (s *scramClient) Step(challenge string) (string, error) { return s.conv.Step(challenge) }
func (s *scramClient) Done() bool                            { return s.conv.Done() }

func applySecurity(c *sarama.Config) {
	s := runner.Sec
	if cfg := s.TLS(); cfg != nil {
		c.Net.TLS.Enable = true
		c.Net.TLS.Config = cfg
	}
	if !s.SASL() {
		return
	}
	c.Net.SASL.Enable = true
	c.Net.SASL.User = s.Username
	c.Net.SASL.Password = s.Password
	switch s.Mechanism {
	case "PLAIN":
		c.Net.SASL.Mechanism = sarama.SASLTypePlaintext
	case "SCRAM-SHA-256":
		c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA256
		c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &scramClient{hash: scram.HashGeneratorFcn(sha256.New)} }
	case "SCRAM-SHA-512":
		c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
		c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &scramClient{hash: scram.HashGeneratorFcn(sha512.New)} }
	default:
		panic(fmt.Sprintf("unknown SASL mechanism %q", s.Mechanism))
	}
}

// login asks for metadata; error is "" or the kind of the client's error.
func login(_ context.Context, bootstrap string, _ struct{}) (any, error) {
	err := func() error {
		adm, err := admin(bootstrap)
		if err != nil {
			return err
		}
		defer adm.Close()
		_, err = adm.ListTopics()
		return err
	}()
	switch {
	case err == nil:
		return map[string]any{"error": "", "message": ""}, nil
	case errors.Is(err, sarama.ErrSASLAuthenticationFailed):
		return map[string]any{"error": "sarama.ErrSASLAuthenticationFailed", "message": err.Error()}, nil
	default:
		return map[string]any{"error": fmt.Sprintf("%T", err), "message": err.Error()}, nil
	}
}
