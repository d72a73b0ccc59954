// `cogen setup`: the optional parts that `npm ci` leaves out, each built or installed on demand and
// left as it is once set up: tensorflow (the solver's `tensorflow` backend: tensorflow.ts) and
// reasoning-gym (the bridge's Python environment and catalogue: reasoning-gym.ts).
export { setupTensorflow, tensorflowPackageDir, type SetupOptions } from './tensorflow.js';
export { TFJS_NODE_VERSION, TF_WHEEL_VERSION } from './wheels.js';
export { setupReasoningGym, listReasoningGym, type RgSetupOptions } from './reasoning-gym.js';
