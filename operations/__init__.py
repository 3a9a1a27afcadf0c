"""Operating the portal as a whole: a consistent backup of the database and the files, and its
restore. Above every other app: a backup reads all of them."""
