package braid.javaapi;

import braid.core.AddressVector;
import braid.core.AvSet;
import braid.core.Braid;
import braid.core.Caps;
import braid.core.CompletionQueue;
import braid.core.CoreParams;
import braid.core.Counter;
import braid.core.DeferredWorkQueue;
import braid.core.Domain;
import braid.core.DomainAttr;
import braid.core.Endpoint;
import braid.core.EndpointAttr;
import braid.core.EndpointType;
import braid.core.Errno;
import braid.core.EventQueue;
import braid.core.Fabric;
import braid.core.FabricException;
import braid.core.Hints;
import braid.core.IdleKind;
import braid.core.IdlePolicy;
import braid.core.Info;
import braid.core.MemoryRegion;
import braid.core.Param;
import braid.core.ParamSource;
import braid.core.PeerTransfer;
import braid.core.ProgressModel;
import braid.core.RxAttr;
import braid.core.RxEntry;
import braid.core.Settings;
import braid.core.SettingsException;
import braid.core.SharedReceiveContext;
import braid.core.Threading;
import braid.core.TriggeredEndpoint;
import braid.core.TxAttr;
import braid.provider.link.LinkParams;
import braid.provider.shm.ShmParams;
import braid.provider.tcp.TcpParams;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Constructor;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Configuration as a plain Java program writes it: hints, attributes, settings, exceptions, counters. */
class JavaConfigTest {
    @Test
    void hintsAreBuiltOneFieldAtATime() {
        Hints built = Hints.builder()
            .caps(Caps.TAGGED | Caps.MSG)
            .provider("link")
            .threading(Threading.DOMAIN)
            .set(LinkParams.LINKS, "shm+tcp:lo")
            .set(LinkParams.DISABLE_SHM, true)
            .build();
        assertEquals("link", built.getProvider());
        assertEquals(Threading.DOMAIN, built.getThreading());
        assertEquals("shm+tcp:lo", built.getSettings().get(LinkParams.LINKS));
        Hints copied = new Hints().withCaps(Caps.TAGGED | Caps.MSG).withProvider("link").withThreading(Threading.DOMAIN)
            .withSettings(Settings.DEFAULT.with(LinkParams.LINKS, "shm+tcp:lo").with(LinkParams.DISABLE_SHM, true));
        assertEquals(built, copied);
        assertEquals(built, built.toBuilder().build());
        assertEquals(Caps.TAGGED, new Hints(Caps.TAGGED).getCaps());

        Info link = Braid.getInfo(built).get(0);
        assertEquals(List.of("tcp"), link.getRails().stream().map(Info::getProvider).toList());
    }

    @Test
    void everyAttributeHasWithCopies() {
        DomainAttr d = new DomainAttr().withThreading(Threading.COMPLETION).withProgress(ProgressModel.AUTO)
            .withIdle(new IdlePolicy(IdleKind.BACKOFF, 500_000L)).withMrKeySize(4).withCqDataSize(4).withMrMode(0);
        assertEquals(ProgressModel.AUTO, d.getProgress());
        assertEquals(500_000L, d.getIdle().getMaxParkNanos());
        EndpointAttr e = new EndpointAttr("P", 1L << 20, 1024).withEagerSize(2048).withMaxMsgSize(1L << 30).withProtocolVersion(2);
        assertEquals(2048, e.getEagerSize());
        assertEquals(2, e.getProtocolVersion());
        TxAttr t = new TxAttr(64).withInjectSize(32).withSize(8).withOpFlags(0);
        assertEquals(32, t.getInjectSize());
        RxAttr r = new RxAttr().withUnexpectedLimit(7).withSize(16);
        assertEquals(7, r.getUnexpectedLimit());
        Info info = Braid.getInfo(new Hints().withProvider("shm")).get(0);
        Info tuned = info.withRxAttr(info.getRxAttr().withUnexpectedLimit(99)).with(ShmParams.RING_SIZE, 1 << 16);
        assertEquals(99, tuned.getRxAttr().getUnexpectedLimit());
        assertEquals(1 << 16, tuned.getSettings().get(ShmParams.RING_SIZE));
    }

    @Test
    void settingsResolveWithTheirSourceAndRefuseBadValuesNamingThem() {
        Settings env = Settings.ofEnvironment(Map.of("BRAID_TCP_TIMEOUT_MS", "700"));
        assertEquals(700L, env.get(TcpParams.TIMEOUT_MS));
        assertEquals(ParamSource.ENVIRONMENT, env.resolve(TcpParams.TIMEOUT_MS).getSource());
        Settings api = env.with(TcpParams.TIMEOUT_MS, 900L);
        assertEquals(ParamSource.API, api.resolve(TcpParams.TIMEOUT_MS).getSource());
        SettingsException bad = assertThrows(SettingsException.class, () -> Settings.DEFAULT.with(TcpParams.BUFFER_SIZE, 100).get(TcpParams.BUFFER_SIZE));
        assertEquals(Errno.EINVAL, bad.getCode());
        assertTrue(bad.getMessage().contains("tcp.buffer_size"), bad.getMessage());
        assertTrue(bad.getMessage().contains("set tcp.buffer_size ≥ 4 KiB"), bad.getMessage());
        for (Param<?> p : Braid.parameters()) assertTrue(p.getEnv().startsWith("BRAID_"), p.toString());
        assertTrue(Braid.parameters().contains(CoreParams.JOB_KEY));
    }

    @Test
    void fabricExceptionsAreBuiltWithoutANull() {
        FabricException e = new FabricException(Errno.EINVAL, "bad value");
        assertEquals(Errno.EINVAL, e.getCode());
        assertNull(e.getCause());
        assertTrue(e.getMessage().startsWith("bad value"));
        Throwable cause = new IllegalStateException("x");
        assertEquals(cause, new FabricException(Errno.EIO, "failed", cause).getCause());
    }

    @Test
    void counterWaitForDoesNotBindToObjectWait() throws Exception {
        Info info = Braid.getInfo(Hints.builder().provider("shm").build()).get(0);
        try (Fabric fabric = Braid.fabric(info)) {
            Domain domain = fabric.domain(info);
            Counter c = domain.counter();
            c.add(3);
            // counter.wait(3, 1000) would be Object.wait(long, int): the operation is waitFor.
            assertEquals(0, c.waitFor(3, 1000));
            assertEquals(-Errno.ETIMEDOUT, c.waitFor(4, 10));
        }
    }

    @Test
    void objectModelConstructorsAreNotCallableFromJava() {
        // javac calls neither private nor synthetic constructors: `new Endpoint(domain, info)` does not compile.
        List<Class<?>> classes = List.of(Fabric.class, Domain.class, Endpoint.class, CompletionQueue.class, Counter.class, AddressVector.class,
            AvSet.class, EventQueue.class, MemoryRegion.class, DeferredWorkQueue.class, SharedReceiveContext.class, TriggeredEndpoint.class,
            PeerTransfer.class, RxEntry.class);
        for (Class<?> k : classes) {
            for (Constructor<?> c : k.getDeclaredConstructors()) {
                boolean reachable = java.lang.reflect.Modifier.isPublic(c.getModifiers()) && !c.isSynthetic();
                assertTrue(!reachable, k.getSimpleName() + " has a constructor Java can call: " + c);
            }
        }
    }
}
