// bench.js - times ONNX Runtime (the onnxruntime-node npm package, CPU) on
// one model: node bench.js MODEL.onnx INPUT.bin D0,D1,... THREADS RUNS [DTYPE]
// DTYPE is float32 (default) or int64. Prints the median in ms as JSON and
// writes the output next to the input.
const ort = require('onnxruntime-node');
const fs = require('fs');

async function main() {
  const [model, input, dims, threads, runs, dtype = 'float32'] = process.argv.slice(2);
  const shape = dims.split(',').map(Number);
  const buffer = fs.readFileSync(input);
  const arrays = {float32: Float32Array, int64: BigInt64Array};
  if (!(dtype in arrays))
    throw new Error(`bench.js: unsupported input dtype ${dtype}`);
  const Array_ = arrays[dtype];
  const data = new Array_(buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.length));
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {x: new ort.Tensor(dtype, data, shape)};
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
