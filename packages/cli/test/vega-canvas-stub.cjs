// Jest only: vega-canvas's Node build awaits `import('canvas')` at its top level, which the CJS
// transform cannot compile. This stands in for it as it behaves without the optional `canvas`
// package (every function returns null), which is what the chart uses anyway: renderSvg turns
// canvas text measuring off, so the SVG bytes are the same with and without `canvas`.
module.exports = { canvas: () => null, domCanvas: () => null, image: () => null, nodeCanvas: () => null };
