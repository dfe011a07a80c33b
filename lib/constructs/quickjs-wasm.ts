// The transformation sandbox's WebAssembly file (QuickJS, @jitl/quickjs-wasmfile-release-sync), copied beside a
// function's index.mjs, where adapters/sandbox/quickjs-sandbox.ts reads it on the first transformation run: esbuild
// bundles the JavaScript, not the .wasm the package loads from its own folder. About 500 KB, outside the JS budget
// (loaded only by a function that runs a transformation, once per container).
import { QUICKJS_WASM_FILE } from '../../lambdas/adapters/sandbox/quickjs-sandbox';

/** The package's file, relative to the repository root. */
export const QUICKJS_WASM_SOURCE = 'node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm';

/** afterBundling commands (NodeFunctionProps.afterBundling) for a function that runs or checks transformations. */
export function quickjsWasmBundling(inputDir: string, outputDir: string): string[] {
  return [`cp "${inputDir}/${QUICKJS_WASM_SOURCE}" "${outputDir}/${QUICKJS_WASM_FILE}"`];
}
