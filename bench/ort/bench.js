// bench.js - times ONNX Runtime (the onnxruntime-node npm package, CPU) on
// one model: node bench.js MODEL.onnx INPUT.bin D0,D1,... THREADS RUNS
// Prints the median in ms as JSON and writes the output next to the input.
const ort = require('onnxruntime-node');
const fs = require('fs');

async function main() {
  const [model, input, dims, threads, runs] = process.argv.slice(2);
  const shape = dims.split(',').map(Number);
  const buffer = fs.readFileSync(input);
  const data = new Float32Array(buffer.buffer, buffer.byteOffset, buffer.length / 4);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {x: new ort.Tensor('float32', data, shape)};
  let out;
  for (let i = 0; i < 5; ++i)
    out = await session.run(feeds);
  const samples = [];
  for (let i = 0; i < Number(runs); ++i) {
    const start = process.hrtime.bigint();
    out = await session.run(feeds);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  samples.sort((a, b) => a - b);
  const y = out[session.outputNames[0]];
  fs.writeFileSync(input.replace(/\.input\.bin$/, '.ort.bin'),
                   Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength));
  console.log(JSON.stringify({median_ms: samples[Math.floor(samples.length / 2)],
                              version: require('onnxruntime-node/package.json').version}));
}
main().catch((e) => { console.error(e); process.exit(1); });
