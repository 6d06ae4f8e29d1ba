package api

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
)

// The relay contract: a routed command's relay finds its ticket's FIFOs in
// the relay directory by RelayName, writes one RelayRequest line into the
// in-FIFO, keeps it open until it exits, and reads a frame stream from the
// out-FIFO. A used or expired ticket leaves a tombstone holding RelayGoneUsed
// or RelayGoneExpired.

// TicketPrefix starts every ticket; it keeps a ticket from reading as a
// flag.
const TicketPrefix = "ght1."

// TicketRandomBytes is a ticket's randomness: 192 bits.
const TicketRandomBytes = 24

// ticketLen is the length of a ticket.
var ticketLen = len(TicketPrefix) + base64.RawURLEncoding.EncodedLen(TicketRandomBytes)

// Errors of a ticket's redemption. The messages are the relay's one line on
// stderr.
var (
	ErrMalformedTicket = errors.New("the ticket is malformed (truncated, or not a Gatehouse ticket)")
	ErrUnknownTicket   = errors.New("the ticket is unknown to this Gatehouse service (forged, truncated, or issued before the service restarted)")
	ErrUsedTicket      = errors.New("the ticket was already used; a ticket runs its command once")
	ErrExpiredTicket   = errors.New("the ticket expired before the relay redeemed it; the command never ran")
)

// ValidTicket reports whether t has the form of a ticket.
func ValidTicket(t string) bool {
	if len(t) != ticketLen || !strings.HasPrefix(t, TicketPrefix) {
		return false
	}
	_, err := base64.RawURLEncoding.Strict().DecodeString(t[len(TicketPrefix):])
	return err == nil
}

// RelayName returns the base name of ticket t's FIFOs in the relay
// directory: a hash of the ticket, so that the directory does not hold the
// ticket itself.
func RelayName(t string) string {
	s := sha256.Sum256([]byte("gatehouse relay fifo\x00" + t))
	return hex.EncodeToString(s[:16])
}

// File names of one ticket's FIFOs and tombstone, from its RelayName.
func RelayInName(name string) string   { return name + ".in" }
func RelayOutName(name string) string  { return name + ".out" }
func RelayGoneName(name string) string { return name + ".gone" }

// Tombstone contents: why a ticket's FIFOs are gone.
const (
	RelayGoneUsed    = "used"
	RelayGoneExpired = "expired"
)

// RelayRequest is the one line a relay writes into its ticket's in-FIFO.
type RelayRequest struct {
	Ticket string `json:"ticket"`
	PID    int    `json:"pid"`
}

// PathTicketCheck asks whether a ticket is live for an agent's session,
// without redeeming it (TicketCheckRequest): Claude Code's
// PermissionRequest hook lets a relay out of Claude Code's sandbox only
// then.
const PathTicketCheck = "/v1/tickets/check"

// TicketCheckRequest names a ticket and the agent session that holds it.
type TicketCheckRequest struct {
	Ticket    string `json:"ticket"`
	Agent     string `json:"agent"`
	SessionID string `json:"session_id"`
}

// TicketCheckResponse says whether the ticket is live: issued by this
// service to a hook of that agent and session, pending, neither redeemed
// nor expired. Reason says why not.
type TicketCheckResponse struct {
	Live   bool   `json:"live"`
	Reason string `json:"reason,omitempty"`
}
