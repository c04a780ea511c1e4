"""The Textual front end. Everything it shows comes from the core (troubleshooter.guide and friends);
nothing in the core imports this package."""
