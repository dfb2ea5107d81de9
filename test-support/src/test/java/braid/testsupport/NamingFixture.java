package braid.testsupport;

import io.kotest.core.spec.style.FunSpec;
import kotlin.Unit;

/**
 * A Kotest spec (written in Java) that {@link KotestSurefireEngineTest} runs through the launcher:
 * a passing and a failing top-level test and one test inside a context. Not a Surefire test
 * itself: its name matches none of Surefire's patterns.
 */
public class NamingFixture extends FunSpec {
    public NamingFixture() {
        test("a passing case", (scope, continuation) -> Unit.INSTANCE);
        test("a failing case", (scope, continuation) -> {
            throw new AssertionError("fails on purpose");
        });
        context("a context", (scope, continuation) ->
                scope.test("a nested case", (inner, c) -> Unit.INSTANCE, continuation));
    }
}
