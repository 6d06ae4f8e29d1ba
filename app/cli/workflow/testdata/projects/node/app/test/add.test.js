const assert = require('node:assert');
const { add } = require('dep');

assert.strictEqual(add(2, 3), 5);
console.log('add: ok');
