// Paths of the repository, from the compiled tests (build/test/*.js).
import { fileURLToPath } from "node:url";

/** The package's directory (mcpts/). */
export const pkgDir = fileURLToPath(new URL("../../", import.meta.url));
/** The repository's root. */
export const repoDir = fileURLToPath(new URL("../../../", import.meta.url));
/** otelschema/testdata, the vectors every instrumentation shares. */
export const testdataDir = fileURLToPath(new URL("../../../otelschema/testdata/", import.meta.url));
/** otelschema/conventions.json. */
export const conventionsPath = fileURLToPath(new URL("../../../otelschema/conventions.json", import.meta.url));
