/* d3 from npm (node_modules/d3, served as static/vendor/d3): its UMD build, loaded once, as this module's default
 * export. d3 7 ships no browser module of its own (its package's ESM entry imports thirty packages by bare name). */
import "../vendor/d3/d3.min.js";

export default globalThis.d3;
