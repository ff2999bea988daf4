package console

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/rebalance"
)

// adminTimeout bounds one admin action.
const adminTimeout = 30 * time.Second

// AdminHeader must carry the console's admin key (Console.AdminKey) on
// admin requests. The key is made anew for every console and never served
// by it: the operator gets it in the URL the console prints
// (http://127.0.0.1:8080/#key=...), whose fragment the page reads and a
// browser never sends. A page of another origin cannot read it, not even
// one whose host name was rebound to the console's address.
const AdminHeader = "X-Zkcoord-Admin"

// newAdminKey returns 128 random bits in hex.
func newAdminKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// AdminKey is the key admin requests must carry in AdminHeader, or "" when
// admin actions are not enabled.
func (c *Console) AdminKey() string { return c.key }

// AdminURL is base (the console's own address, such as
// "http://127.0.0.1:8080/") with the admin key in its fragment, where the
// page finds it; base itself when admin actions are not enabled.
func (c *Console) AdminURL(base string) string {
	if c.key == "" {
		return base
	}
	return base + "#key=" + c.key
}

// allowedHost tells whether a request's Host names this console: an IP
// address, "localhost", or one of Options.Hosts. A web page whose host name
// was rebound to the console's address (DNS rebinding) sends its own name,
// and is refused.
func (c *Console) allowedHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if net.ParseIP(host) != nil || strings.EqualFold(host, "localhost") {
		return true
	}
	for _, h := range c.opts.Hosts {
		if strings.EqualFold(host, h) {
			return true
		}
	}
	return false
}

// guard refuses every request whose Host the console does not serve as.
func (c *Console) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !c.allowedHost(r.Host) {
			reply(w, http.StatusForbidden, "console: "+r.Host+" is not a host name of this console (see Options.Hosts, zkcoord ui --host)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// admin checks that admin actions are enabled, that the request comes from
// the console's own origin and that it carries the admin key, and answers
// the request if not.
func (c *Console) admin(w http.ResponseWriter, r *http.Request) bool {
	if !c.opts.Admin {
		reply(w, http.StatusForbidden, "console: read-only (admin actions are not enabled)")
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			reply(w, http.StatusForbidden, "console: admin requests from origin "+o+" are refused")
			return false
		}
	}
	if subtle.ConstantTimeCompare([]byte(r.Header.Get(AdminHeader)), []byte(c.key)) != 1 {
		reply(w, http.StatusForbidden, "console: admin requests need the console's key in the header "+AdminHeader+
			" (open the URL the console printed at start)")
		return false
	}
	return true
}

func reply(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"result": msg})
}

// breakLock deletes the node of a lock's holder: form values path (the
// lock), node (the holder's node name) and confirm, which must repeat
// node. The node must be a current holder as the console last saw it.
func (c *Console) breakLock(w http.ResponseWriter, r *http.Request) {
	if !c.admin(w, r) {
		return
	}
	path, node, confirm := r.FormValue("path"), r.FormValue("node"), r.FormValue("confirm")
	if node == "" || confirm != node {
		reply(w, http.StatusBadRequest, "confirm must repeat the holder's node name")
		return
	}
	v, ok := c.hub.view(path)
	if !ok || v.Lock == nil {
		reply(w, http.StatusNotFound, "no lock at "+path)
		return
	}
	full := ""
	for _, h := range v.Lock.Holders {
		if h.Node == node {
			full = zkcoord.Join(path, node)
			if v.Kind == KindSemaphore {
				full = zkcoord.Join(path, "leases", node)
			}
		}
	}
	if full == "" {
		reply(w, http.StatusConflict, node+" does not hold "+path)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), adminTimeout)
	defer cancel()
	err := c.session().Delete(ctx, full, -1)
	c.log.Warn("console: admin: break lock", "lock", path, "node", full, "remote", r.RemoteAddr, "err", err)
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		reply(w, http.StatusBadGateway, err.Error())
		return
	}
	reply(w, http.StatusOK, "deleted "+full+"; its holder may go on running until its ZooKeeper session expires"+
		" (up to the session timeout), unless it watches its lock: fence what the lock guards")
}

// resource adds or removes a rebalancer resource: form values group (the
// group's path), op ("add" or "remove"), id and confirm, which must repeat
// id.
func (c *Console) resource(w http.ResponseWriter, r *http.Request) {
	if !c.admin(w, r) {
		return
	}
	group, op, id, confirm := r.FormValue("group"), r.FormValue("op"), r.FormValue("id"), r.FormValue("confirm")
	if id == "" || confirm != id {
		reply(w, http.StatusBadRequest, "confirm must repeat the resource id")
		return
	}
	if v, ok := c.hub.view(group); !ok || v.Group == nil {
		reply(w, http.StatusNotFound, "no rebalancer group at "+group)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), adminTimeout)
	defer cancel()
	root, name := zkcoord.Parent(group), zkcoord.Base(group)
	var err error
	switch op {
	case "add":
		err = rebalance.AddResource(ctx, c.session(), zkcoord.Join(root, name), id)
	case "remove":
		err = rebalance.RemoveResource(ctx, c.session(), zkcoord.Join(root, name), id)
	default:
		reply(w, http.StatusBadRequest, `op must be "add" or "remove"`)
		return
	}
	c.log.Warn("console: admin: "+op+" resource", "group", group, "resource", id, "remote", r.RemoteAddr, "err", err)
	if err != nil {
		reply(w, http.StatusBadGateway, err.Error())
		return
	}
	reply(w, http.StatusOK, op+" "+id+": done")
}
