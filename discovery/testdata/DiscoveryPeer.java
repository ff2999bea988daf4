import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.curator.x.discovery.details.ServiceCacheListener;
import org.apache.curator.framework.state.ConnectionState;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

// DiscoveryPeer drives Curator's service discovery (curator-x-discovery)
// with Map payloads.
// Arguments: connect string, base path.
// Commands:
//   "register NAME ID ADDRESS PORT SSLPORT KEY=VALUE" -> "registered ID"
//     (SSLPORT and KEY=VALUE may be "-" for none; the uri spec is
//     "{scheme}://{address}:{port}")
//   "update ID PORT" -> "updated ID"
//   "unregister ID" -> "unregistered ID"
//   "names" -> "names A,B"
//   "query NAME" -> one "instance ..." line per instance (sorted by id),
//     then "end"
//   "provider NAME" -> "provider ID" (round robin)
//   "cache NAME" -> starts a ServiceCache and prints "cache NAME LIST",
//     then again on every change it reports; LIST is the cached
//     instances as ID:PORT, sorted and comma-separated, or "-"
// Events: "ready", "error <message>" (see Peer).
public class DiscoveryPeer {
    static Map<String, ServiceInstance<Map>> mine = new HashMap<>();

    public static void main(String[] args) throws Exception {
        CuratorFramework c = Peer.connect(args[0], 20000);
        ServiceDiscovery<Map> sd = ServiceDiscoveryBuilder.builder(Map.class).client(c).basePath(args[1])
                .serializer(new JsonInstanceSerializer<Map>(Map.class)).build();
        sd.start();
        Map<String, ServiceProvider<Map>> providers = new HashMap<>();
        java.util.List<ServiceCache<Map>> caches = new java.util.ArrayList<>();
        Peer.serve(f -> {
            switch (f[0]) {
                case "register": {
                    Map<String, String> payload = null;
                    if (!f[6].equals("-")) {
                        payload = new HashMap<>();
                        String[] kv = f[6].split("=", 2);
                        payload.put(kv[0], kv[1]);
                    }
                    org.apache.curator.x.discovery.ServiceInstanceBuilder<Map> b = ServiceInstance.<Map>builder()
                            .name(f[1]).id(f[2]).address(f[3]).port(Integer.parseInt(f[4]))
                            .payload(payload).uriSpec(new UriSpec("{scheme}://{address}:{port}"));
                    if (!f[5].equals("-")) b.sslPort(Integer.parseInt(f[5]));
                    ServiceInstance<Map> si = b.build();
                    sd.registerService(si);
                    mine.put(f[2], si);
                    System.out.println("registered " + f[2]);
                    return true;
                }
                case "update": {
                    ServiceInstance<Map> old = mine.get(f[1]);
                    org.apache.curator.x.discovery.ServiceInstanceBuilder<Map> b = ServiceInstance.<Map>builder()
                            .name(old.getName()).id(old.getId()).address(old.getAddress())
                            .port(Integer.parseInt(f[2])).payload(old.getPayload()).uriSpec(old.getUriSpec())
                            .registrationTimeUTC(old.getRegistrationTimeUTC());
                    if (old.getSslPort() != null) b.sslPort(old.getSslPort());
                    ServiceInstance<Map> si = b.build();
                    sd.updateService(si);
                    mine.put(f[1], si);
                    System.out.println("updated " + f[1]);
                    return true;
                }
                case "unregister":
                    sd.unregisterService(mine.remove(f[1]));
                    System.out.println("unregistered " + f[1]);
                    return true;
                case "names":
                    System.out.println("names " + String.join(",", new java.util.TreeSet<>(sd.queryForNames())));
                    return true;
                case "query": {
                    TreeMap<String, ServiceInstance<Map>> byId = new TreeMap<>();
                    for (ServiceInstance<Map> si : sd.queryForInstances(f[1])) byId.put(si.getId(), si);
                    for (ServiceInstance<Map> si : byId.values()) {
                        Map<String, Object> vars = new HashMap<>();
                        vars.put("scheme", "http");
                        System.out.println("instance id=" + si.getId() + " name=" + si.getName()
                                + " address=" + si.getAddress() + " port=" + si.getPort()
                                + " ssl=" + si.getSslPort() + " type=" + si.getServiceType()
                                + " enabled=" + si.isEnabled() + " time=" + si.getRegistrationTimeUTC()
                                + " payload=" + (si.getPayload() == null ? null : new TreeMap<>(si.getPayload()))
                                + " uri=" + si.buildUriSpec(vars));
                    }
                    System.out.println("end");
                    return true;
                }
                case "provider": {
                    ServiceProvider<Map> p = providers.get(f[1]);
                    if (p == null) {
                        p = sd.serviceProviderBuilder().serviceName(f[1]).build();
                        p.start();
                        providers.put(f[1], p);
                    }
                    ServiceInstance<Map> si = p.getInstance();
                    System.out.println("provider " + (si == null ? "-" : si.getId()));
                    return true;
                }
                case "cache": {
                    ServiceCache<Map> sc = sd.serviceCacheBuilder().name(f[1]).build();
                    Runnable print = () -> {
                        TreeMap<String, Integer> byId = new TreeMap<>();
                        for (ServiceInstance<Map> si : sc.getInstances()) byId.put(si.getId(), si.getPort());
                        StringBuilder b = new StringBuilder();
                        for (Map.Entry<String, Integer> e : byId.entrySet()) {
                            if (b.length() > 0) b.append(',');
                            b.append(e.getKey()).append(':').append(e.getValue());
                        }
                        System.out.println("cache " + f[1] + " " + (b.length() == 0 ? "-" : b));
                    };
                    sc.addListener(new ServiceCacheListener() {
                        public void cacheChanged() { print.run(); }
                        public void stateChanged(CuratorFramework client, ConnectionState s) {}
                    });
                    sc.start();
                    caches.add(sc);
                    print.run();
                    return true;
                }
                default:
                    return false;
            }
        });
        for (ServiceProvider<Map> p : providers.values()) p.close();
        for (ServiceCache<Map> sc : caches) sc.close();
        sd.close();
        c.close();
    }
}
