// Package discovery is service discovery on ZooKeeper, compatible with
// Apache Curator's curator-x-discovery: Java services registered through
// Curator are found by Go services and the other way round.
//
// # Layout
//
// A [Discovery] works under a base path (Curator's basePath). Each service
// is a node named after it, and each instance of the service a child named
// by the instance's id:
//
//	<base>/<service name>/<instance id>
//
// The instance node holds the JSON that Curator's JsonInstanceSerializer
// writes and reads ([Instance] marshals to it): name, id, address, port,
// sslPort, payload, registrationTimeUTC, serviceType and uriSpec, with
// absent values as null. Service nodes are containers; instance nodes are
// ephemeral for [Dynamic] instances (the default) and persistent for
// [Static] and [Permanent] ones. A [DynamicSequential] instance's node is
// ephemeral sequential, named _c_<uuid>-<id><sequence> (Curator's
// protected form), so that a create whose reply was lost is found again
// rather than made twice; Curator finds it by its JSON.
//
// # Registering
//
// [Discovery.Register] creates an instance's node; the [Registration] it
// returns updates ([Registration.Update]) and removes
// ([Registration.Unregister]) it. A Dynamic instance lives as long as the
// Session: zkcoord never continues a Session on a new ZooKeeper session,
// so after the Session ends, open a new one and call
// [Registration.Reregister] with a Discovery on it.
//
// # Finding
//
// [Discovery.Names], [Discovery.Instances] and [Discovery.Instance] read
// the registry. A [Provider] ([Discovery.NewProvider]) follows one service
// through a children cache (package cache) and hands out its instances
// with a [Strategy]: [RoundRobin] (the default), [Random] or [Sticky].
// [Provider.MarkDown] stops handing out an instance for a while, for
// example after a call to it failed; instances whose JSON says
// "enabled": false are not handed out either. Queries and providers serve
// only instances that match their node: JSON naming the service of the
// parent node and the id the node is named by (for [DynamicSequential],
// the id followed by a sequence number, after a protected prefix when
// zkcoord registered it), with an address or a port. Other nodes, such as
// "null" or "{}", are skipped and logged through the Session's logger;
// [Discovery.Instance] fails on them with an error wrapping
// zkcoord.ErrBadData.
// A provider follows its service only while its Session lives: once the
// Session has ended, or the provider was closed, [Provider.Get] and
// [Provider.Instances] fail with [ErrStopped], wrapping the Session's
// cause, rather than hand out what may be gone.
//
// # Concurrency
//
// All types are safe for concurrent use.
package discovery
