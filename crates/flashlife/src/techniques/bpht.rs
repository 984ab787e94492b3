//! Bad-page history table (placeholder).
