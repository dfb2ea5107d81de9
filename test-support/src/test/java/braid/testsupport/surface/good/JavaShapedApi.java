package braid.testsupport.surface.good;

import java.util.function.Consumer;

/** A fixture whose public methods keep JavaSurface's rules; its private one may break them. */
public class JavaShapedApi {
    public void onEach(Consumer<String> block) {
    }

    private void hidden(kotlin.jvm.functions.Function0<kotlin.Unit> f) {
    }
}
