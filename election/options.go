package election

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zkcoord/zkcoord"
)

// MaxIDLen bounds a participant id, which is stored as the data of the
// candidate's node (and of the term and leader nodes).
const MaxIDLen = 4096

// Option configures an Election.
type Option func(*options)

type options struct {
	id         string
	idSet      bool
	logger     *slog.Logger
	events     chan<- Event
	termPath   string
	ackPath    string
	revokePath string
	recheck    time.Duration
	value      string
	lockDelay  time.Duration // WithLockDelay
}

// WithRecheck sets how often a follower reads the participants again in
// case a notification was lost. Default: the Session's timeout, at most
// 10 seconds.
func WithRecheck(d time.Duration) Option {
	return func(o *options) { o.recheck = d }
}

// WithID sets the participant id written as the data of every candidate
// node this Election creates (Curator's LeaderLatch id). Default: host
// name, process id and a random suffix.
func WithID(id string) Option {
	return func(o *options) { o.id, o.idSet = id, true }
}

// WithValue sets the value a leader of this Election advertises from the
// moment it takes office, until it proclaims another (Leadership.Proclaim):
// observers read it in Leader.Value. It is kept in the leader node, so it
// must be UTF-8 and, with the rest of that node's data, fit
// Config.MaxDataSize. Default: none ("").
func WithValue(value string) Option {
	return func(o *options) { o.value = value }
}

// WithLogger sends the Election's logs to l. Default: the Session's logger.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithEvents sends every transition of every candidate of this Election
// to ch; the owner of a candidate's events is the candidate, until its
// Done is closed.
// Delivery follows “Event channels” in the [zkcoord] package documentation:
// in order, none dropped while the owner lives, the channel never closed.
// Events are sent on a goroutine other than the candidate's state machine,
// so a slow reader never delays the end of a leadership (Leadership.Done).
// A slow reader does delay Campaign's and Nominate's return, and the
// closing of Elected, which follow the events before them into ch: read
// ch on another goroutine, or give it room.
func WithEvents(ch chan<- Event) Option {
	return func(o *options) { o.events = ch }
}

// WithTermPath sets the term node's path. Default: the election path with
// "-term" appended, beside the participant directory, because Curator
// counts every child of that directory as a participant.
func WithTermPath(p string) Option {
	return func(o *options) { o.termPath = p }
}

// WithRevokePath sets the path of the node through which a leader is
// asked to give its leadership up (Election.Revoke). Default: the election
// path with "-revoke" appended.
func WithRevokePath(p string) Option {
	return func(o *options) { o.revokePath = p }
}

// WithLeaderPath sets the path of the node in which a leader acknowledges
// that it has taken office. Default: the election path with "-leader"
// appended.
func WithLeaderPath(p string) Option {
	return func(o *options) { o.ackPath = p }
}

func (o *options) validate(sess *zkcoord.Session, path string) error {
	if err := zkcoord.ValidatePath(path); err != nil {
		return fmt.Errorf("election: %w", err)
	}
	if path == "/" {
		return fmt.Errorf("election: %w: the election path cannot be /", zkcoord.ErrInvalidPath)
	}
	if !o.idSet {
		o.id = defaultID()
	}
	if err := validateID(o.id); err != nil {
		return err
	}
	if err := o.validateValue(sess, path, o.value); err != nil {
		return err
	}
	if o.lockDelay < 0 {
		return fmt.Errorf("election: negative lock-delay %v", o.lockDelay)
	}
	if o.termPath == "" {
		o.termPath = path + "-term"
	}
	if o.ackPath == "" {
		o.ackPath = path + "-leader"
	}
	if o.revokePath == "" {
		o.revokePath = path + "-revoke"
	}
	for _, p := range []string{o.termPath, o.ackPath, o.revokePath} {
		if err := zkcoord.ValidatePath(p); err != nil {
			return fmt.Errorf("election: %w", err)
		}
		if p == "/" || p == path || strings.HasPrefix(p, path+"/") {
			return fmt.Errorf("election: %w: %s must not be / or inside the election node %s", zkcoord.ErrInvalidPath, p, path)
		}
	}
	if o.termPath == o.ackPath || o.revokePath == o.termPath || o.revokePath == o.ackPath {
		return fmt.Errorf("election: %w: the term, leader and revocation paths must differ", zkcoord.ErrInvalidPath)
	}
	if o.logger == nil {
		o.logger = sess.Logger()
	}
	return nil
}

func validateID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty", ErrInvalidID)
	case len(id) > MaxIDLen:
		return fmt.Errorf("%w: %d bytes, limit %d", ErrInvalidID, len(id), MaxIDLen)
	case !utf8.ValidString(id):
		return fmt.Errorf("%w: not UTF-8", ErrInvalidID)
	}
	return nil
}

// validateValue checks that value can be advertised by a leader of the
// election at path: UTF-8, and the leader node that holds it within
// Config.MaxDataSize, whatever the leader's node, token and term.
func (o *options) validateValue(sess *zkcoord.Session, path, value string) error {
	if !utf8.ValidString(value) {
		return fmt.Errorf("%w: not UTF-8", ErrInvalidValue)
	}
	longest := zkcoord.Join(path, zkcoord.ProtectedPrefix+strings.Repeat("0", 36)+"-"+latchName+"-2147483648")
	data, _ := json.Marshal(ackRecord{ID: o.id, Node: longest, Token: math.MaxInt64, Term: math.MaxInt64, Value: value})
	if max := sess.Config().MaxDataSize; len(data) > max {
		return fmt.Errorf("election: %w: the leader node would hold %d bytes with this value, limit %d", zkcoord.ErrTooLarge, len(data), max)
	}
	return nil
}

func defaultID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}
