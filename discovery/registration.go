package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Registration is an instance this process registered. It is safe for
// concurrent use.
type Registration struct {
	mu   sync.Mutex
	d    *Discovery
	in   Instance
	path string // the node, which differs from the id's for DynamicSequential
}

// Register creates the instance's node: ephemeral for Dynamic instances
// (the default), so that it disappears with the Session, persistent for
// Static and Permanent ones. A DynamicSequential instance's node is
// ephemeral sequential with a protected name, _c_<uuid>-<id><sequence>,
// so that a create whose reply was lost is found again rather than made
// twice; Path returns it. An instance needs an address or a port (else
// ErrInvalid): queries and providers serve no instance without one. The service's node is created as a container
// if missing. A node already at the instance's path that this Session
// does not own is replaced, as Curator does: an instance id names one
// instance. An empty ID gets a random UUID, a zero RegistrationTimeUTC the
// current time.
func (d *Discovery) Register(ctx context.Context, in Instance) (*Registration, error) {
	in = complete(in)
	r := &Registration{d: d, in: in}
	if err := r.create(ctx, d); err != nil {
		return nil, err
	}
	return r, nil
}

// Instance returns the instance as last registered or updated.
func (r *Registration) Instance() Instance {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.in
}

// Path returns the instance's node.
func (r *Registration) Path() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.path
}

// Reregister registers the instance again, with the data of the latest
// Update, through another discovery service, typically one on a new
// Session after the old one ended (its ephemeral node went with it).
// Later calls use the new service.
func (r *Registration) Reregister(ctx context.Context, d *Discovery) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.create(ctx, d); err != nil {
		return err
	}
	r.d = d
	return nil
}

// Update replaces the registered instance's data. Its name and id cannot
// change. The data is recorded as the instance's (Instance returns it)
// before it is written, and stays recorded when the write fails: after
// the Session ended, Update fails (wrapping the Session's cause) but
// Reregister registers the data of the latest Update, never older data.
func (r *Registration) Update(ctx context.Context, in Instance) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	in, err := updated(r.in, in)
	if err != nil {
		return err
	}
	data, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("discovery: %w", err)
	}
	r.in = in
	if _, err := r.d.sess.Set(ctx, r.path, data, -1); err != nil {
		if errors.Is(err, zkcoord.ErrNoNode) {
			return fmt.Errorf("%w: %s", ErrNotFound, r.path)
		}
		return fmt.Errorf("discovery: update %s: %w", r.in, err)
	}
	return nil
}

// Unregister deletes the instance's node; a node already gone is success.
func (r *Registration) Unregister(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := recipe.EnsureDeleted(ctx, r.d.sess, r.path); err != nil {
		return fmt.Errorf("discovery: unregister %s: %w", r.in, err)
	}
	return nil
}

// updated returns next, an Update of the registered instance cur, with
// the registration time and service type of cur where next leaves them
// unset, or why next cannot replace cur: another name or id, or no
// address and no port.
func updated(cur, next Instance) (Instance, error) {
	if next.Name != cur.Name || next.ID != cur.ID {
		return Instance{}, fmt.Errorf("%w: an update cannot change the name or id of %s", ErrInvalid, cur)
	}
	if err := reachable(next); err != nil {
		return Instance{}, err
	}
	if next.RegistrationTimeUTC == 0 {
		next.RegistrationTimeUTC = cur.RegistrationTimeUTC
	}
	if next.ServiceType == "" {
		next.ServiceType = cur.ServiceType
	}
	return next, nil
}

// reachable checks that an instance has an address or a port: providers
// and queries serve no other (see decode).
func reachable(in Instance) error {
	if in.Address == "" && in.Port == 0 && in.SSLPort == 0 {
		return fmt.Errorf("%w: instance %s/%s has no address and no port", ErrInvalid, in.Name, in.ID)
	}
	return nil
}

// createFlags returns the create flags of in's node, or why in cannot be
// registered.
func createFlags(in Instance) (int32, error) {
	if err := reachable(in); err != nil {
		return 0, err
	}
	switch in.ServiceType {
	case Dynamic:
		return zkcoord.FlagEphemeral, nil
	case DynamicSequential:
		return zkcoord.FlagEphemeral | zkcoord.FlagSequence, nil
	case Static, Permanent:
		return 0, nil
	}
	return 0, fmt.Errorf("%w: service type %q", ErrInvalid, in.ServiceType)
}

// create writes the node through d; r.mu is held or r is not shared yet.
func (r *Registration) create(ctx context.Context, d *Discovery) error {
	path, err := d.path(r.in.Name, r.in.ID)
	if err != nil {
		return err
	}
	flags, err := createFlags(r.in)
	if err != nil {
		return err
	}
	data, err := json.Marshal(r.in)
	if err != nil {
		return fmt.Errorf("discovery: %w", err)
	}
	s := d.sess
	if r.in.ServiceType == DynamicSequential {
		// A sequential create cannot be repeated: each try makes a node.
		// A protected name (_c_<uuid>-<id><sequence>) lets a create whose
		// reply was lost find its node again.
		created, err := s.CreateProtected(ctx, zkcoord.Parent(path), zkcoord.Base(path), data, flags)
		if err != nil {
			return fmt.Errorf("discovery: register %s: %w", r.in, err)
		}
		r.path = created
		return nil
	}
	// A create of a fixed path can be repeated: a node found at the path
	// is ours (a create whose reply was lost) or is replaced.
	err = s.Retry(ctx, func(ctx context.Context) error {
		for {
			created, err := s.Create(ctx, path, data, flags)
			switch {
			case err == nil:
				r.path = created
				return nil
			case errors.Is(err, zkcoord.ErrNoNode):
				if err := s.EnsureContainers(ctx, zkcoord.Parent(path)); err != nil {
					return err
				}
			case errors.Is(err, zkcoord.ErrNodeExists):
				ok, st, err := s.Exists(ctx, path)
				if err != nil {
					return err
				}
				if ok && flags&zkcoord.FlagEphemeral != 0 && st.EphemeralOwner == s.ID() {
					if _, err := s.Set(ctx, path, data, -1); err != nil {
						return err
					}
					r.path = path
					return nil
				}
				if ok {
					err := s.Delete(ctx, path, st.Version)
					if err != nil && !errors.Is(err, zkcoord.ErrNoNode) && !errors.Is(err, zkcoord.ErrBadVersion) {
						return err
					}
				}
			default:
				return err
			}
		}
	})
	if err != nil {
		return fmt.Errorf("discovery: register %s: %w", r.in, err)
	}
	return nil
}
