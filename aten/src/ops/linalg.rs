//! Linear algebra on tensors (placeholder until the next commit).
