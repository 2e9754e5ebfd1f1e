"""AWS infrastructure as a CDK app: one construct per concern, composed by one stack."""
