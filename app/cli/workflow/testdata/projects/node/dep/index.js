exports.add = (a, b) => a + b;
