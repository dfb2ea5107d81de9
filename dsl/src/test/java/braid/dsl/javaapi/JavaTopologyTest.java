package braid.dsl.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import braid.dsl.ConfigFileException;
import braid.dsl.LinkStrings;
import braid.dsl.OpenLink;
import braid.dsl.ResolvedLink;
import braid.dsl.SpecProblem;
import braid.dsl.Topology;
import braid.dsl.TopologyFiles;
import braid.dsl.TopologySpec;
import org.junit.jupiter.api.Test;

/** The topology API as a Java caller sees it: read a file, resolve, open, and the errors. */
class JavaTopologyTest {
    @Test
    void aFileOpensALinkFromJava() throws Exception {
        TopologySpec spec = TopologyFiles.parse("links = [\"shm+tcp:lo\"]\nprogress { model = AUTO }\n", TopologyFiles.Format.HOCON);
        assertEquals("shm+tcp:lo", spec.getLinks().get(0).getLinkString());
        ResolvedLink resolved = Topology.resolve(spec);
        assertEquals("link", resolved.getInfo().getProvider());
        try (OpenLink link = Topology.open(spec)) {
            assertTrue(link.getAddress().length > 0);
            assertEquals(braid.core.ProgressModel.AUTO, link.getDomain().getProgressModel());
        }
        assertEquals(2, LinkStrings.parse("shm+tcp:eth0,lo").size());
    }

    @Test
    void aBadFileNamesItsLineAndPath() {
        ConfigFileException e = assertThrows(ConfigFileException.class,
            () -> TopologyFiles.parse("{\n \"links\": [{\"name\": \"x\", \"rails\": [{\"name\": \"a\", \"provider\": \"tcp\", \"weight\": -2}]}]\n}", TopologyFiles.Format.JSON, "t.json"));
        SpecProblem p = e.getProblems().get(0);
        assertEquals("links[0].rails[0].weight", p.getPath());
        assertEquals(Integer.valueOf(2), p.getLine());
        assertEquals(braid.core.Errno.EINVAL, e.getCode());
    }
}
