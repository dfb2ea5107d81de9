package braid.javaapi;

import braid.core.AtomicDatatype;
import braid.core.AtomicOp;
import braid.core.Braid;
import braid.core.Domain;
import braid.core.Endpoint;
import braid.core.EndpointFutures;
import braid.core.Errno;
import braid.core.Fabric;
import braid.core.Hints;
import braid.core.HmemCopyFunction;
import braid.core.HmemIface;
import braid.core.HmemOp;
import braid.core.Info;
import braid.core.MemoryRegion;
import braid.core.MrAccess;
import braid.core.Settings;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Device memory and override ops as a Java caller writes them: a lambda is a copy function. */
class HmemJavaTest {
    @Test
    void javaLambdasAreCopyFunctionsAndDeviceRegionsAreDescribedByAddress() {
        Info info = Braid.getInfo(new Hints().withProvider("shm").withSettings(Settings.ofEnvironment(Map.of()))).get(0);
        HmemIface gpu = HmemIface.define("java-test-device");
        assertSame(gpu, HmemIface.define("java-test-device"));
        AtomicLong bytes = new AtomicLong();
        HmemCopyFunction copy = (iface, device, iov, iovCount, iovOffset, host, size) -> {
            bytes.addAndGet(size);
            return size;
        };
        try (Fabric fabric = Braid.fabric(info); Domain domain = fabric.domain(info)) {
            assertEquals(0, domain.setOp(HmemOp.COPY_TO_HMEM_IOV, copy));
            assertEquals(0, domain.setOp(HmemOp.COPY_FROM_HMEM_IOV, copy));
            MemoryRegion mr = domain.registerMemory(gpu, 0, 0x4000_0000_0000_0000L, 4096, MrAccess.SEND);
            assertSame(gpu, mr.getIface());
            assertEquals(4096, mr.getLength());
            assertThrows(RuntimeException.class, mr::byteBuffer);
            Endpoint ep = domain.endpoint();
            assertEquals(0, ep.setOp(HmemOp.COPY_TO_HMEM_IOV, null));
            assertEquals(-Errno.EOPBADSTATE, ep.trySend(mr, 0, 64, 0, null));
            assertEquals(-Errno.EOPBADSTATE, ep.tryInject(mr, 0, 64, 0));
            // The atomics' region forms, called as Java writes them (not enabled: refused).
            assertTrue(ep.tryFetchAtomic(mr, 0, 1, mr, 8, 0, 0, 0, AtomicDatatype.INT64, AtomicOp.SUM, null) < 0);
            // Their future and blocking forms, and RMA's, are static calls of EndpointFutures (refused the same way).
            assertThrows(Exception.class, () -> EndpointFutures.fetchAtomicAsync(
                    ep, mr, 0, 1, mr, 8, 0, 0, 0, AtomicDatatype.INT64, AtomicOp.SUM).get(5, TimeUnit.SECONDS));
            assertThrows(RuntimeException.class, () -> EndpointFutures.compareAtomicBlocking(
                    ep, mr, 0, 1, mr, 8, mr, 16, 0, 0, 0, AtomicDatatype.INT64, AtomicOp.CSWAP, 5_000));
            assertThrows(RuntimeException.class, () -> EndpointFutures.writeBlocking(ep, mr, 0, 64, 0, 0, 0, 5_000));
            ep.close();
        }
    }
}
