package pdf

// EngineBase is engineBase, for the tests of the engine's ceiling.
const EngineBase = engineBase
