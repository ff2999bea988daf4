package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
	"github.com/zkcoord/zkcoord/internal/seq"
)

// Errors of this package.
var (
	// ErrInvalid wraps the errors of calls given a nil Session, an invalid
	// path, or an instance without a valid name or id.
	ErrInvalid = errors.New("discovery: invalid argument")
	// ErrNoInstance: the provider has no instance to hand out.
	ErrNoInstance = errors.New("discovery: no instance available")
	// ErrNotFound: the instance is not registered.
	ErrNotFound = errors.New("discovery: instance not found")
	// ErrStopped: the provider or cache no longer follows its service,
	// because it was closed or its Session ended (the error then wraps the
	// Session's cause), or a supervised registration has ended.
	ErrStopped = errors.New("discovery: stopped")
)

// Discovery registers and finds instances under a base path, in
// curator-x-discovery's layout: base/<service name>/<instance id>, each
// node holding an Instance's JSON. It is safe for concurrent use.
type Discovery struct {
	sess *zkcoord.Session
	base string
	opts []Option // for every provider, before its own
}

// New returns the discovery service rooted at base (Curator's basePath).
// Its options are the defaults of every provider it starts.
func New(sess *zkcoord.Session, base string, opts ...Option) (*Discovery, error) {
	if err := recipe.Validate(sess, base); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return &Discovery{sess: sess, base: base, opts: opts}, nil
}

// Session returns the Session the service uses.
func (d *Discovery) Session() *zkcoord.Session { return d.sess }

// Names returns the sorted names of the services that have a node under
// the base path, with or without instances.
func (d *Discovery) Names(ctx context.Context) ([]string, error) {
	names, _, err := d.sess.Children(ctx, d.base)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovery: names: %w", err)
	}
	sort.Strings(names)
	return names, nil
}

// Instances returns the registered instances of a service, sorted by id.
// A node whose data is not an instance's JSON is skipped and logged
// through the Session's logger.
func (d *Discovery) Instances(ctx context.Context, name string) ([]Instance, error) {
	dir, err := d.dir(name)
	if err != nil {
		return nil, err
	}
	ids, _, err := d.sess.Children(ctx, dir)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovery: instances of %s: %w", name, err)
	}
	sort.Strings(ids)
	var out []Instance
	for _, id := range ids {
		in, err := d.read(ctx, zkcoord.Join(dir, id))
		switch {
		case errors.Is(err, ErrNotFound):
		case errors.Is(err, zkcoord.ErrBadData):
			d.sess.Logger().Warn("discovery: skipping an instance", "err", err)
		case err != nil:
			return nil, err
		default:
			out = append(out, in)
		}
	}
	// By id: a DynamicSequential instance's node name starts otherwise.
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Instance returns one registered instance.
func (d *Discovery) Instance(ctx context.Context, name, id string) (Instance, error) {
	p, err := d.path(name, id)
	if err != nil {
		return Instance{}, err
	}
	return d.read(ctx, p)
}

func (d *Discovery) read(ctx context.Context, path string) (Instance, error) {
	data, _, err := d.sess.Get(ctx, path)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return Instance{}, fmt.Errorf("%w: %s", ErrNotFound, path)
	}
	if err != nil {
		return Instance{}, fmt.Errorf("discovery: %w", err)
	}
	return decode(path, data)
}

// decode reads the instance at path, base/<service>/<node>; the error
// wraps zkcoord.ErrBadData. Only an instance that can be served passes:
// JSON of the service named by the parent node, with the id the node is
// named by, and an address or a port to reach it at. The node's name is
// the id, or for a DynamicSequential instance the id and a sequence
// suffix, after a protected prefix when zkcoord registered it.
func decode(path string, data []byte) (Instance, error) {
	var in Instance
	if err := json.Unmarshal(data, &in); err != nil {
		return Instance{}, fmt.Errorf("%w: %s is not a service instance: %v", zkcoord.ErrBadData, path, err)
	}
	service, node := zkcoord.Base(zkcoord.Parent(path)), zkcoord.Base(path)
	switch {
	case in.Name != service:
		return Instance{}, fmt.Errorf("%w: %s is not an instance of service %q: its name is %q", zkcoord.ErrBadData, path, service, in.Name)
	case in.ID == "" || !names(node, in):
		return Instance{}, fmt.Errorf("%w: %s is not the node of instance id %q (%s)", zkcoord.ErrBadData, path, in.ID, in.ServiceType)
	case in.Address == "" && in.Port == 0 && in.SSLPort == 0:
		return Instance{}, fmt.Errorf("%w: %s is an instance without an address or a port", zkcoord.ErrBadData, path)
	}
	return in, nil
}

// names reports whether node is the name of in's node.
func names(node string, in Instance) bool {
	if node == in.ID {
		return true
	}
	if in.ServiceType != DynamicSequential {
		return false
	}
	rest, ok := strings.CutPrefix(zkcoord.StripProtected(node), in.ID)
	if !ok {
		return false
	}
	_, ok = seq.Parse(rest)
	return ok
}

// dir returns a service's node.
func (d *Discovery) dir(name string) (string, error) {
	if err := zkcoord.ValidateName(name); err != nil {
		return "", fmt.Errorf("%w: service name: %w", ErrInvalid, err)
	}
	return zkcoord.Join(d.base, name), nil
}

// path returns an instance's node.
func (d *Discovery) path(name, id string) (string, error) {
	dir, err := d.dir(name)
	if err != nil {
		return "", err
	}
	if err := zkcoord.ValidateName(id); err != nil {
		return "", fmt.Errorf("%w: instance id: %w", ErrInvalid, err)
	}
	return zkcoord.Join(dir, id), nil
}

// complete fills in an instance's defaults before it is registered.
func complete(in Instance) Instance {
	if in.ID == "" {
		in.ID = uuid.NewString()
	}
	if in.RegistrationTimeUTC == 0 {
		in.RegistrationTimeUTC = time.Now().UnixMilli()
	}
	if in.ServiceType == "" {
		in.ServiceType = Dynamic
	}
	return in
}
