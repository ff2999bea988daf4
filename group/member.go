package group

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/end"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Errors of membership.
var (
	// ErrLeft: the member left the group with Leave.
	ErrLeft = errors.New("group: member left")
	// ErrRemoved: the member's node was deleted by someone else.
	ErrRemoved = errors.New("group: member node removed")
)

// Member is one member of a group, as listed by Members and Watch.
type Member struct {
	// ID is the id given to Join (the node name without its protected
	// prefix).
	ID string
	// Path is the member's node.
	Path string
	// Data is what the member joined with.
	Data []byte
	// Session is the id of the ZooKeeper session that owns the member.
	Session int64
	// Joined is the zxid of the member's creation: members with smaller
	// values joined earlier.
	Joined int64
}

// Membership is this process's membership of a group.
type Membership struct {
	id         string
	supervised bool // JoinConfig: joins again on every new Session

	stop     context.CancelFunc // stops the watch (JoinConfig: the Sessions)
	done     chan struct{}      // closed when the watch ended (JoinConfig: the Sessions)
	lost     *end.End           // ends, with the cause, when membership ends
	joined   chan struct{}      // JoinConfig: closed once the first join is done
	mu       sync.Mutex
	sess     *zkcoord.Session // Join's (JoinConfig's Sessions are Supervise's)
	path     string           // the member's node; with JoinConfig, the latest
	leave    sync.Once
	leaving  atomic.Bool // Leave was called (JoinConfig: delete the node before the Session closes)
	leaveErr error       // JoinConfig: what deleting the node gave; written before done closes

	own recipe.OwnContext
}

// Join adds a member with the given id and data to the group at path
// (created as a container if missing). Data larger than the Session's
// limit is refused with an error wrapping zkcoord.ErrTooLarge.
func Join(ctx context.Context, sess *zkcoord.Session, path, id string, data []byte, opts ...Option) (*Membership, error) {
	if err := recipe.Validate(sess, path); err != nil {
		return nil, fmt.Errorf("group: %w", err)
	}
	o, err := newOptions(id, opts)
	if err != nil {
		return nil, err
	}
	if o.events != nil {
		return nil, fmt.Errorf("group: %w: recovery events need JoinConfig (a Session cannot be renewed)", zkcoord.ErrInvalidConfig)
	}
	if data == nil {
		data = []byte{}
	}
	node, err := sess.CreateProtected(ctx, path, id, data, zkcoord.FlagEphemeral)
	if err != nil {
		return nil, fmt.Errorf("group: join %s: %w", path, err)
	}
	wctx, stop := context.WithCancel(context.Background())
	m := &Membership{
		sess: sess, id: id, path: node,
		stop: stop, done: make(chan struct{}), lost: end.New(),
	}
	go func() {
		defer close(m.done)
		if err := m.follow(wctx, sess, node); err != nil {
			m.end(err)
		}
	}()
	return m, nil
}

// JoinConfig adds a member to the group at path, as Join does, on
// Sessions it opens itself from cfg, through zkcoord.Supervise: when a
// Session is Lost or Expired, a new one is opened (with backoff) and the
// member joins again on it, with the same id and data, as a new node
// (Path changes); after a partition, the old Session's node, which the
// server keeps until it expires that Session, is deleted first, so that
// no stale member of the process stays listed. It returns once the member
// has joined the first time, or ctx ends. Done closes, and the membership
// ends for good, on Leave, on an error a new Session cannot fix (rejected
// credentials, an invalid Config, a join the server refuses) and when the
// member's node is deleted by someone else (ErrRemoved), as with Join.
// Between a Session's end and the next join the process is not a member,
// and Members does not list it.
func JoinConfig(ctx context.Context, cfg zkcoord.Config, path, id string, data []byte, opts ...Option) (*Membership, error) {
	if err := recipe.ValidatePath(path); err != nil {
		return nil, fmt.Errorf("group: %w", err)
	}
	o, err := newOptions(id, opts)
	if err != nil {
		return nil, err
	}
	data = bytes.Clone(data)
	if data == nil {
		data = []byte{}
	}
	sctx, stop := context.WithCancel(context.Background())
	m := &Membership{
		id: id, supervised: true, stop: stop,
		done: make(chan struct{}), lost: end.New(), joined: make(chan struct{}),
	}
	go func() {
		defer close(m.done)
		err := m.supervise(sctx, cfg, path, data, o)
		if err == nil || errors.Is(err, context.Canceled) {
			err = ErrLeft // only Leave cancels sctx
		}
		m.end(err)
	}()
	select {
	case <-m.joined:
		return m, nil
	case <-m.lost.Done():
		<-m.done
		return nil, fmt.Errorf("group: join %s: %w", path, m.Err())
	case <-ctx.Done():
		m.Leave(context.Background())
		return nil, fmt.Errorf("group: join %s: %w", path, ctx.Err())
	}
}

// supervise joins on every Session that zkcoord.Supervise opens and
// follows the member's node until that Session ends.
func (m *Membership) supervise(ctx context.Context, cfg zkcoord.Config, path string, data []byte, o options) error {
	var opts []zkcoord.SuperviseOption
	if o.events != nil {
		opts = append(opts, zkcoord.WithRecoveryEvents(o.events))
	}
	var (
		prev     int64  // the Session of the last join
		prevNode string // the node of the last join
	)
	return zkcoord.Supervise(ctx, cfg, func(ctx context.Context, sess *zkcoord.Session) error {
		if len(data) > sess.Config().MaxDataSize {
			return fmt.Errorf("group: %w: %d bytes", zkcoord.ErrTooLarge, len(data))
		}
		if prev != 0 {
			dropStale(ctx, sess, prevNode, prev)
		}
		node, err := sess.CreateProtected(ctx, path, m.id, data, zkcoord.FlagEphemeral)
		if err != nil {
			return fmt.Errorf("group: join %s: %w", path, err)
		}
		m.mu.Lock()
		m.path = node
		m.mu.Unlock()
		if prev == 0 {
			close(m.joined)
		}
		prev, prevNode = sess.ID(), node
		err = m.follow(ctx, sess, node)
		if m.leaving.Load() && sess.Err() == nil {
			// Supervise closes the Session when work returns: delete the
			// node first, so that the others see the member go at once.
			dctx, cancel := context.WithTimeout(context.Background(), sess.Timeout())
			m.leaveErr = recipe.EnsureDeleted(dctx, sess, node)
			cancel()
		}
		return err
	}, opts...)
}

// ID returns the member's id.
func (m *Membership) ID() string { return m.id }

// dropStale deletes the member node of the Session prev if the server
// still holds it: a Session declared Lost lives on at the server until it
// expires, and its node with it, though this process is no longer that
// member. Deleted now, the group does not list the process twice. It is
// best effort: a node left behind goes when the old Session expires.
func dropStale(ctx context.Context, sess *zkcoord.Session, node string, prev int64) {
	ok, st, err := sess.Exists(ctx, node)
	if err == nil && ok && st.EphemeralOwner == prev {
		_ = sess.Delete(ctx, node, st.Version)
	}
}

// Path returns the member's node (with JoinConfig, the node of the
// latest join).
func (m *Membership) Path() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.path
}

// Done is closed when this process is no longer a member. With
// JoinConfig it is closed only when the membership ends for good, not
// while the member waits for a new Session to join again on.
func (m *Membership) Done() <-chan struct{} { return m.lost.Done() }

// Err returns nil while a member, then why it no longer is: ErrLeft,
// ErrRemoved, the Session's error, or the error that stopped the watch on
// the member's node (a membership that cannot be watched is over).
func (m *Membership) Err() error { return m.lost.Err() }

func (m *Membership) end(err error) { m.lost.End(err) }

// follow watches the member's own node on sess until it goes, the
// Session ends or ctx ends (Leave). It returns why the membership ended:
// nil when stopped, ErrRemoved, the Session's error, or the error that
// stopped the watch.
func (m *Membership) follow(ctx context.Context, sess *zkcoord.Session, node string) error {
	for {
		_, _, w, err := sess.GetW(ctx, node)
		switch {
		case errors.Is(err, zkcoord.ErrNoNode):
			if serr := sess.Err(); serr != nil {
				return serr
			}
			return fmt.Errorf("%w: %s", ErrRemoved, node)
		case err != nil && ctx.Err() != nil:
			return nil // stopped by Leave
		case err != nil:
			// Without a watch a removal would go unnoticed: whatever the
			// error, the membership has ended.
			if serr := sess.Err(); serr != nil {
				return serr
			}
			return fmt.Errorf("group: watch %s: %w", node, err)
		}
		select {
		case <-w:
		case <-sess.Done():
			return sess.Err()
		case <-ctx.Done():
			return nil
		}
	}
}

// Leave removes the member from the group. Done closes and Err returns
// ErrLeft (unless membership had already ended for another reason).
func (m *Membership) Leave(ctx context.Context) error {
	var err error
	m.leave.Do(func() {
		m.end(ErrLeft)
		m.leaving.Store(true)
		m.stop()
		if m.supervised {
			select {
			case <-m.done:
				err = m.leaveErr
			case <-ctx.Done():
				err = ctx.Err()
			}
			return
		}
		<-m.done
		err = recipe.EnsureDeleted(ctx, m.sess, m.path)
		if err != nil && m.sess.Err() != nil {
			err = nil // the server removes the node with the session
		}
	})
	if err != nil {
		return fmt.Errorf("group: leave %s: %w", m.path, err)
	}
	return nil
}

// Members lists the members of the group at path, sorted by ID (then by
// path). A group that does not exist has no members.
func Members(ctx context.Context, sess *zkcoord.Session, path string) ([]Member, error) {
	if err := recipe.Validate(sess, path); err != nil {
		return nil, fmt.Errorf("group: %w", err)
	}
	children, _, err := sess.Children(ctx, path)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("group: members of %s: %w", path, err)
	}
	return members(ctx, sess, path, children)
}

// members reads the member nodes among children.
func members(ctx context.Context, sess *zkcoord.Session, path string, children []string) ([]Member, error) {
	out := make([]Member, 0, len(children))
	for _, c := range children {
		p := zkcoord.Join(path, c)
		data, st, err := sess.Get(ctx, p)
		if errors.Is(err, zkcoord.ErrNoNode) {
			continue // left meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("group: members of %s: %w", path, err)
		}
		if st.EphemeralOwner == 0 {
			continue // not a member
		}
		out = append(out, Member{
			ID: zkcoord.StripProtected(c), Path: p, Data: data,
			Session: st.EphemeralOwner, Joined: st.Czxid,
		})
	}
	slices.SortFunc(out, func(a, b Member) int {
		if c := strings.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out, nil
}

// Context returns a context cancelled when the membership ends, with Err as its cause:
// do the owner's work under it.
func (m *Membership) Context() context.Context { return m.own.Get(m.Done(), m.Err) }
