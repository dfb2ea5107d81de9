package braid.javaapi;

import braid.core.Braid;
import braid.core.Domain;
import braid.core.Endpoint;
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
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
            ep.close();
        }
    }
}
