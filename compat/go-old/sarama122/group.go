package main

import (
	"context"
	"sync"

	"github.com/Shopify/sarama"
)

func contextBackground() context.Context { return context.Background() }

// handler marks every record it reads (the record after it is the next to
// read) and signals once it has read `want` of them (after deleting the
// first record, the prefilled partition starts at offset 1).
type handler struct {
	mu    sync.Mutex
	want  int
	count int
	done  chan struct{}
	once  sync.Once
}

func (h *handler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *handler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		s.MarkMessage(m, "")
		h.mu.Lock()
		h.count++
		reached := h.count >= h.want
		h.mu.Unlock()
		if reached {
			h.once.Do(func() { close(h.done) })
		}
	}
	return nil
}
