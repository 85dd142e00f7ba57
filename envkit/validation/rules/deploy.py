"""EK6xx deployment-safety rules (secrets, upload size, ignore files)."""
