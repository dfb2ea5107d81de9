package braid.testsupport.surface.bad;

import kotlin.Unit;
import kotlin.jvm.functions.Function1;

/** A fixture whose public methods break JavaSurface's rules. */
public class KotlinShapedApi {
    public void onEach(Function1<String, Unit> block) {
    }

    public Unit done() {
        return Unit.INSTANCE;
    }
}
