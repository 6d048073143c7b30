"""Where a run's state goes between supersteps: the checkpoint document, the types that may
cross it, signing, the store contract and its memory, folder and S3 stores, and the session lock."""
