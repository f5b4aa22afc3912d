/* The tree panel's viewport as tree.js draws it: the panel's size, the last layout's bounds and the zoom. The far
 * view, the minimap, the tree tools and the export read it here, so none of them imports the tree (which imports
 * them to draw them); asking the view to move is an event on model.js ("pan-to"), which the tree listens for. */
import d3 from "./d3-from-npm.js";

const viewport = { svg: null, size: { width: 0, height: 0 }, bounds: null };

// tree.js: the panel's svg and its size object (kept up to date in place), then each layout's bounds.
export function attachViewport(svg, size) {
  viewport.svg = svg;
  viewport.size = size;
}
export const setTreeBounds = (bounds) => { viewport.bounds = bounds; };

export const treeSize = () => viewport.size;
export const treeBounds = () => viewport.bounds;
export const zoomTransform = () => (viewport.svg ? d3.zoomTransform(viewport.svg) : d3.zoomIdentity);
export const treeSvg = () => viewport.svg;
