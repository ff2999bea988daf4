package group

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/zkcoord/zkcoord"
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
	sess *zkcoord.Session
	id   string
	path string

	stop  context.CancelFunc // stops the watch
	done  chan struct{}      // closed when the watch ended
	lost  chan struct{}      // closed with err set, when membership ends
	once  sync.Once
	mu    sync.Mutex
	err   error
	leave sync.Once

	own recipe.OwnContext
}

// Join adds a member with the given id and data to the group at path
// (created as a container if missing). Data larger than the Session's
// limit is refused with an error wrapping zkcoord.ErrTooLarge.
func Join(ctx context.Context, sess *zkcoord.Session, path, id string, data []byte) (*Membership, error) {
	if err := recipe.Validate(sess, path); err != nil {
		return nil, fmt.Errorf("group: %w", err)
	}
	if err := zkcoord.ValidateName(id); err != nil {
		return nil, fmt.Errorf("group: member id: %w", err)
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
		stop: stop, done: make(chan struct{}), lost: make(chan struct{}),
	}
	go m.watch(wctx)
	return m, nil
}

// ID returns the member's id.
func (m *Membership) ID() string { return m.id }

// Path returns the member's node.
func (m *Membership) Path() string { return m.path }

// Done is closed when this process is no longer a member.
func (m *Membership) Done() <-chan struct{} { return m.lost }

// Err returns nil while a member, then why it no longer is: ErrLeft,
// ErrRemoved, the Session's error, or the error that stopped the watch on
// the member's node (a membership that cannot be watched is over).
func (m *Membership) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

func (m *Membership) end(err error) {
	m.once.Do(func() {
		m.mu.Lock()
		m.err = err
		m.mu.Unlock()
		close(m.lost)
	})
}

// watch follows the member's own node until it goes, the Session ends or
// Leave stops it.
func (m *Membership) watch(ctx context.Context) {
	defer close(m.done)
	for {
		_, _, w, err := m.sess.GetW(ctx, m.path)
		switch {
		case errors.Is(err, zkcoord.ErrNoNode):
			if serr := m.sess.Err(); serr != nil {
				m.end(serr)
			} else {
				m.end(fmt.Errorf("%w: %s", ErrRemoved, m.path))
			}
			return
		case err != nil && ctx.Err() != nil:
			return // stopped by Leave
		case err != nil:
			// Without a watch a removal would go unnoticed: whatever the
			// error, the membership has ended.
			if serr := m.sess.Err(); serr != nil {
				m.end(serr)
			} else {
				m.end(fmt.Errorf("group: watch %s: %w", m.path, err))
			}
			return
		}
		select {
		case <-w:
		case <-m.sess.Done():
			m.end(m.sess.Err())
			return
		case <-ctx.Done():
			return
		}
	}
}

// Leave removes the member from the group. Done closes and Err returns
// ErrLeft (unless membership had already ended for another reason).
func (m *Membership) Leave(ctx context.Context) error {
	var err error
	m.leave.Do(func() {
		m.end(ErrLeft)
		m.stop()
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
