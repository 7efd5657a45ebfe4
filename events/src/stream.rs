//! Stream formats (JSON Lines and binary). Being written.
